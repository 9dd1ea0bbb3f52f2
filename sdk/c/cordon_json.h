/*
 * Reading a tool's JSON arguments and writing its JSON output, in C.
 *
 * Header-only; include it in one file after the bindings' header. The host
 * validates arguments against the tool's input schema before the call, so
 * the reader only needs to find values, not to diagnose bad JSON: on
 * anything unexpected it reports "absent" rather than crashing.
 *
 *   cj_string(args, len, "text", &out, &out_len)   a string member, unescaped (malloc'd)
 *   cj_number(args, len, "limit", &value)           a number member
 *   cj_bool(args, len, "verbose", &value)           a boolean member
 *   cj_buf / cj_put / cj_put_string / cj_putf        build the output
 */
#ifndef CORDON_JSON_H
#define CORDON_JSON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *at;
  const char *end;
} cj_cursor;

static void cj_space(cj_cursor *c) {
  while (c->at < c->end && (*c->at == ' ' || *c->at == '\t' || *c->at == '\n' || *c->at == '\r')) c->at++;
}

static int cj_hex(char h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}

static bool cj_hex4(cj_cursor *c, uint32_t *out) {
  if (c->end - c->at < 4) return false;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int d = cj_hex(c->at[i]);
    if (d < 0) return false;
    v = v * 16 + (uint32_t)d;
  }
  c->at += 4;
  *out = v;
  return true;
}

static size_t cj_utf8(uint32_t cp, char *out) {
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12)); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18)); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Read a string at the cursor; when `out` is not NULL, unescape it into a malloc'd buffer. */
static bool cj_read_string(cj_cursor *c, char **out, size_t *out_len) {
  if (c->at >= c->end || *c->at != '"') return false;
  c->at++;
  char *buf = NULL;
  size_t len = 0;
  if (out) {
    buf = malloc((size_t)(c->end - c->at) + 1);
    if (!buf) return false;
  }
  while (c->at < c->end && *c->at != '"') {
    char ch = *c->at++;
    if (ch != '\\') {
      if (buf) buf[len++] = ch;
      continue;
    }
    if (c->at >= c->end) break;
    char esc = *c->at++;
    char tmp[4];
    size_t n = 1;
    switch (esc) {
      case 'n': tmp[0] = '\n'; break;
      case 't': tmp[0] = '\t'; break;
      case 'r': tmp[0] = '\r'; break;
      case 'b': tmp[0] = '\b'; break;
      case 'f': tmp[0] = '\f'; break;
      case 'u': {
        uint32_t cp;
        if (!cj_hex4(c, &cp)) { free(buf); return false; }
        if (cp >= 0xD800 && cp < 0xDC00 && c->end - c->at >= 6 && c->at[0] == '\\' && c->at[1] == 'u') {
          cj_cursor low = {c->at + 2, c->end};
          uint32_t lo;
          if (cj_hex4(&low, &lo) && lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            c->at = low.at;
          }
        }
        n = cj_utf8(cp, tmp);
        break;
      }
      default: tmp[0] = esc; break;
    }
    if (buf) { memcpy(buf + len, tmp, n); len += n; }
  }
  if (c->at >= c->end) { free(buf); return false; }
  c->at++;
  if (out) { buf[len] = '\0'; *out = buf; *out_len = len; }
  return true;
}

/* Skip one value of any type. */
static bool cj_skip(cj_cursor *c) {
  cj_space(c);
  if (c->at >= c->end) return false;
  char ch = *c->at;
  if (ch == '"') return cj_read_string(c, NULL, NULL);
  if (ch == '{' || ch == '[') {
    char close = ch == '{' ? '}' : ']';
    c->at++;
    cj_space(c);
    if (c->at < c->end && *c->at == close) { c->at++; return true; }
    for (;;) {
      if (ch == '{') {
        cj_space(c);
        if (!cj_read_string(c, NULL, NULL)) return false;
        cj_space(c);
        if (c->at >= c->end || *c->at != ':') return false;
        c->at++;
      }
      if (!cj_skip(c)) return false;
      cj_space(c);
      if (c->at >= c->end) return false;
      if (*c->at == ',') { c->at++; continue; }
      if (*c->at == close) { c->at++; return true; }
      return false;
    }
  }
  while (c->at < c->end && !strchr(",}] \t\n\r", *c->at)) c->at++;
  return true;
}

/* Place the cursor on the value of the top-level member `key`. */
static bool cj_member(const char *json, size_t len, const char *key, cj_cursor *value) {
  cj_cursor c = {json, json + len};
  cj_space(&c);
  if (c.at >= c.end || *c.at != '{') return false;
  c.at++;
  for (;;) {
    cj_space(&c);
    char *name = NULL;
    size_t name_len = 0;
    if (!cj_read_string(&c, &name, &name_len)) return false;
    bool match = strlen(key) == name_len && memcmp(name, key, name_len) == 0;
    free(name);
    cj_space(&c);
    if (c.at >= c.end || *c.at != ':') return false;
    c.at++;
    cj_space(&c);
    if (match) { *value = c; return true; }
    if (!cj_skip(&c)) return false;
    cj_space(&c);
    if (c.at < c.end && *c.at == ',') { c.at++; continue; }
    return false;
  }
}

/* The string member `key`, unescaped and NUL-terminated, in a buffer to free(). */
static bool cj_string(const char *json, size_t len, const char *key, char **out, size_t *out_len) {
  cj_cursor v;
  return cj_member(json, len, key, &v) && cj_read_string(&v, out, out_len);
}

static bool cj_number(const char *json, size_t len, const char *key, double *out) {
  cj_cursor v;
  if (!cj_member(json, len, key, &v)) return false;
  char tmp[64];
  size_t n = 0;
  while (v.at < v.end && n < sizeof tmp - 1 && strchr("+-0123456789.eE", *v.at)) tmp[n++] = *v.at++;
  if (n == 0) return false;
  tmp[n] = '\0';
  *out = strtod(tmp, NULL);
  return true;
}

static bool cj_bool(const char *json, size_t len, const char *key, bool *out) {
  cj_cursor v;
  if (!cj_member(json, len, key, &v)) return false;
  if (v.end - v.at >= 4 && memcmp(v.at, "true", 4) == 0) { *out = true; return true; }
  if (v.end - v.at >= 5 && memcmp(v.at, "false", 5) == 0) { *out = false; return true; }
  return false;
}

/* A growing output buffer. */
typedef struct {
  char *ptr;
  size_t len;
  size_t cap;
} cj_buf;

static void cj_put_bytes(cj_buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *grown = realloc(b->ptr, cap);
    if (!grown) abort();
    b->ptr = grown;
    b->cap = cap;
  }
  memcpy(b->ptr + b->len, s, n);
  b->len += n;
  b->ptr[b->len] = '\0';
}

static void cj_put(cj_buf *b, const char *s) { cj_put_bytes(b, s, strlen(s)); }

static void cj_putf(cj_buf *b, const char *format, ...) {
  char tmp[128];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(tmp, sizeof tmp, format, args);
  va_end(args);
  if (n > 0) cj_put_bytes(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Write `s` as a JSON string, quoted and escaped. */
static void cj_put_string(cj_buf *b, const char *s, size_t n) {
  cj_put(b, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"') cj_put(b, "\\\"");
    else if (ch == '\\') cj_put(b, "\\\\");
    else if (ch == '\n') cj_put(b, "\\n");
    else if (ch == '\t') cj_put(b, "\\t");
    else if (ch == '\r') cj_put(b, "\\r");
    else if (ch < 0x20) cj_putf(b, "\\u%04x", ch);
    else cj_put_bytes(b, (const char *)&ch, 1);
  }
  cj_put(b, "\"");
}

#endif
