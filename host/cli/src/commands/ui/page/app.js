// The run inspector. Everything shown comes from the run store and may have
// been written by a model or a component, so it reaches the page as text
// only (textContent), never as markup.
'use strict';

const token = (() => {
  const given = /(?:^#|&)token=([0-9a-f]+)/.exec(location.hash);
  if (given) {
    sessionStorage.setItem('cordon-token', given[1]);
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('cordon-token') || '';
})();

async function api(path, options = {}) {
  const headers = { Authorization: 'Bearer ' + token };
  if (options.body) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { ...options, headers });
  const text = await response.text();
  if (!response.ok) throw new Error(text || response.statusText);
  return JSON.parse(text);
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'data') Object.assign(node.dataset, value);
    else if (key === 'style') Object.assign(node.style, value);
    else if (key === 'on') for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);
const pretty = (value) => JSON.stringify(value, null, 2);

function problem(error) {
  $('problem').textContent = error ? String(error.message || error) : '';
}

function outcome(disposition) {
  switch (disposition.disposition) {
    case 'waiting': return 'waiting on ' + disposition.pending.length + ' call(s)';
    case 'running': return 'running';
    case 'ended': return 'ended: ' + (disposition.cause || 'over').replace(/-/g, ' ');
    default: return disposition.disposition;
  }
}

function created(seconds) {
  return new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 16);
}

let runs = [];
let chosen = null;

async function loadRuns() {
  try {
    const listed = await api('/api/runs');
    runs = listed.runs;
    $('store').textContent = listed.store;
    problem(null);
    showRuns();
  } catch (error) {
    problem(error);
  }
}

function showRuns() {
  const wanted = $('filter-outcome').value;
  const agent = $('filter-agent').value.trim().toLowerCase();
  const id = $('filter-run').value.trim().toLowerCase();
  const rows = runs
    .filter((run) => !wanted || run.disposition.disposition === wanted)
    .filter((run) => !agent || run.header.agent.toLowerCase().includes(agent))
    .filter((run) => !id || run.header.run_id.toLowerCase().includes(id))
    .map((run) => el('tr', {
      class: run.header.run_id === chosen ? 'chosen' : '',
      data: { run: run.header.run_id },
      on: { click: () => openRun(run.header.run_id) },
    },
    el('td', { class: run.header.parent ? 'sub' : '' }, run.header.run_id),
    el('td', {}, run.header.agent),
    el('td', {}, created(run.header.created)),
    el('td', { class: 'outcome-' + run.disposition.disposition }, outcome(run.disposition))));
  $('runs').tBodies[0].replaceChildren(...rows);
}

async function openRun(runId) {
  chosen = runId;
  showRuns();
  try {
    const run = await api('/api/run?id=' + encodeURIComponent(runId));
    problem(null);
    showRun(run);
  } catch (error) {
    problem(error);
  }
}

function showRun(run) {
  $('run-pane').hidden = false;
  $('resumed').hidden = true;
  $('detail').hidden = true;
  $('run-title').textContent = 'Run ' + run.run.run_id + ' of ' + run.run.agent;
  const disposition = run.disposition;
  $('run-outcome').replaceChildren(
    el('span', { class: 'outcome-' + disposition.disposition }, outcome(disposition)),
    disposition.answer ? ' — ' + disposition.answer : '');
  const links = [];
  const parent = run.run.parent && run.run.parent['run-id'];
  if (parent) {
    links.push('delegated by ', el('a', { href: '#', class: 'parent-run', on: { click: (event) => { event.preventDefault(); openRun(parent); } } }, parent), ' (call ' + run.run.parent['call-id'] + ') ');
  }
  if (run.sub_runs.length) {
    links.push('sub-agents\' runs: ');
    for (const sub of run.sub_runs) {
      links.push(el('a', { href: '#', class: 'sub-run', on: { click: (event) => { event.preventDefault(); openRun(sub); } } }, sub), ' ');
    }
  }
  $('run-links').replaceChildren(...links);
  showWaiting(run);
  showTimeline(run);
}

function showWaiting(run) {
  const waiting = run.disposition.disposition === 'waiting' && !run.run.parent;
  $('waiting').hidden = !waiting;
  if (!waiting) return;
  const rows = run.pending.map((pending) => {
    const name = 'decision-' + pending.call.id;
    return el('tr', { data: { call: pending.call.id } },
      el('td', {}, pending.call.id),
      el('td', {}, pending.call.name),
      el('td', {}, el('code', {}, JSON.stringify(pending.call.args))),
      el('td', {}, pending.why),
      el('td', {},
        el('label', {}, el('input', { type: 'radio', name, value: 'approve', className: 'approve' }), ' approve'),
        ' ',
        el('label', {}, el('input', { type: 'radio', name, value: 'deny', className: 'deny' }), ' deny')));
  });
  $('pending').tBodies[0].replaceChildren(...rows);
  $('decide').onsubmit = async (event) => {
    event.preventDefault();
    const decisions = {};
    for (const pending of run.pending) {
      const picked = document.querySelector('input[name="' + CSS.escape('decision-' + pending.call.id) + '"]:checked');
      if (!picked) { problem('decide every call: ' + pending.call.id + ' has no decision'); return; }
      decisions[pending.call.id] = picked.value;
    }
    $('resume').disabled = true;
    try {
      const resumed = await api('/api/decide', {
        method: 'POST',
        body: JSON.stringify({ run: run.run.run_id, decisions, reason: $('reason').value }),
      });
      $('resumed').hidden = false;
      $('resumed').textContent = resumed.output;
      problem(resumed.ok ? null : 'the resume said: exit ' + resumed.code);
      await loadRuns();
      const again = await api('/api/run?id=' + encodeURIComponent(run.run.run_id));
      showWaiting(again);
      showTimeline(again);
      $('resumed').hidden = false;
      $('run-outcome').replaceChildren(el('span', { class: 'outcome-' + again.disposition.disposition }, outcome(again.disposition)));
    } catch (error) {
      problem(error);
    } finally {
      $('resume').disabled = false;
    }
  };
}

function verdictClass(record) {
  if (record.decision.verdict === 'deny') return 'deny';
  if (!record.result) return 'ask';
  return record.result.error ? 'error' : 'ok';
}

function showTimeline(run) {
  const timed = run.commits.flatMap((commit) => commit.tools).filter((record) => record.timing);
  const start = Math.min(...timed.map((record) => record.timing.started_ms));
  const end = Math.max(...timed.map((record) => record.timing.started_ms + record.timing.took_us / 1000));
  const span = Math.max(end - start, 1);
  const rows = run.commits.map((commit, index) => {
    const step = run.steps[index];
    const label = step === 0 ? 'prompt' : 'step ' + step;
    const bars = commit.tools.map((record, order) => {
      const position = record.timing
        ? { left: (100 * (record.timing.started_ms - start) / span) + '%', width: Math.max(100 * record.timing.took_us / 1000 / span, 0.5) + '%' }
        : { left: '0%', width: 'auto' };
      const took = record.timing ? ' ' + (record.timing.took_us / 1000).toFixed(1) + ' ms' : '';
      return el('button', {
        type: 'button',
        class: 'bar ' + verdictClass(record),
        style: { ...position, top: (0.25 + order * 1.7) + 'em' },
        title: record.call.name + ' — ' + record.decision.verdict + (record.decision.rule ? ' (' + record.decision.rule + ')' : '') + took,
        data: { call: record.call.id },
        on: { click: () => showDetail(run, commit, record) },
      }, record.call.name + took);
    });
    const chips = commit.events
      .filter((event) => event.event !== 'log' && event.event !== 'progress')
      .map((event) => el('span', { class: 'chip' + (event.event === 'hook-failed' || event.event === 'denied' || event.event === 'limit-exceeded' ? ' warn' : '') }, event.event + (event.bundle ? ' ' + event.bundle : '')));
    for (const record of commit.tools) {
      if (record.decision.answered) chips.push(el('span', { class: 'chip' }, record.call.id + ' ' + (record.decision.answered === 'approve' ? 'approved' : 'denied') + ' by a person'));
    }
    const track = el('div', { class: 'track', style: { minHeight: (0.5 + Math.max(commit.tools.length, 1) * 1.7) + 'em' } }, bars);
    return el('div', { class: 'row', data: { seq: String(commit.seq) } },
      el('div', { class: 'label' }, label),
      el('div', {}, track, chips.length ? el('div', { class: 'chips' }, chips) : null));
  });
  $('timeline').replaceChildren(...rows);
}

async function showDetail(run, commit, record) {
  $('detail').hidden = false;
  $('detail-title').textContent = record.call.id + ' ' + record.call.name;
  const facts = [
    ['verdict', record.decision.verdict],
    ['rule', record.decision.rule || '(the default)'],
    ['decided by', record.decision.by || 'policy'],
    ['answered', record.decision.answered ? pretty(record.decision.answered) : '—'],
    ['took', record.timing ? (record.timing.took_us / 1000).toFixed(2) + ' ms' : '—'],
    ['nested calls', String((record.children || []).length)],
  ];
  $('detail-facts').replaceChildren(...facts.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)]));
  $('detail-args').textContent = pretty(record.call.args);
  $('detail-result').textContent = record.result ? pretty(record.result) : '(none yet)';
  $('detail-events').replaceChildren(...commit.events.map((event) => el('li', {}, JSON.stringify(event))));
  $('detail-diff').textContent = '…';
  try {
    const diff = await api('/api/diff?id=' + encodeURIComponent(run.run.run_id) + '&seq=' + commit.seq);
    $('detail-diff').textContent = diff.diff || '(no files changed)';
  } catch (error) {
    $('detail-diff').textContent = String(error.message || error);
  }
}

for (const id of ['filter-outcome', 'filter-agent', 'filter-run']) {
  $(id).addEventListener('input', showRuns);
}
$('filters').addEventListener('submit', (event) => event.preventDefault());
loadRuns();
