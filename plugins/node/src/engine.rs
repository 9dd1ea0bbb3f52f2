//! One run of a program, start to end: a QuickJS runtime with Node's
//! globals, the program started as `node` starts it, then the event loop:
//! promise jobs drained, timers fired in order (waiting for the next),
//! until nothing is left or `process.exit` is called. A rejection nobody
//! handled, or an uncaught exception, ends the run with status 1 as in
//! Node.

use std::rc::Rc;

use rquickjs::{CatchResultExt, Context, Function, Module, Object, Runtime};

use crate::cli::{self, Program};
use crate::host::{self, Exit};
use crate::modules::{NodeLoader, NodeResolver};

/// The JavaScript half of the interpreter (`node.js`: Node's globals and
/// built-in modules over `__host`), as the QuickJS bytecode `build.rs` made
/// of it.
static NODE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/node.qjsbc"));

/// Runs `program`; its exit status.
pub fn run(program: Program) -> i32 {
    match program {
        Program::Version => {
            println!("{}", cli::VERSION);
            return 0;
        }
        Program::Help => {
            print!("{}", cli::USAGE);
            return 0;
        }
        _ => {}
    }
    let Ok(runtime) = Runtime::new() else {
        eprintln!("node: could not start the JavaScript engine");
        return 1;
    };
    let exit = Rc::new(Exit::default());
    let stopping = Rc::clone(&exit);
    runtime.set_interrupt_handler(Some(Box::new(move || stopping.stopping.get())));
    runtime.set_loader(NodeResolver, NodeLoader);
    runtime.set_host_promise_rejection_tracker(Some(Box::new(|ctx, promise, reason, handled| {
        if let Ok(node) = ctx.globals().get::<_, Object>("__node")
            && let Ok(track) = node.get::<_, Function>("trackRejection")
        {
            let _ = track.call::<_, ()>((promise, reason, handled));
        }
    })));
    let Ok(context) = Context::full(&runtime) else {
        eprintln!("node: could not start the JavaScript engine");
        return 1;
    };
    let started = context.with(|ctx| {
        host::install(&ctx, Rc::clone(&exit))?;
        // SAFETY: the bytes are the bytecode build.rs wrote with this very
        // QuickJS, and they live as long as the program.
        let internal = unsafe { Module::load(ctx.clone(), NODE) }?;
        let (_, evaluated) = internal.eval()?;
        evaluated.finish::<()>()?;
        let node: Object = ctx.globals().get("__node")?;
        let start: Function = node.get("start")?;
        let (kind, source, args, module) = match program {
            Program::Script { path, args } => ("script", path, args, false),
            Program::Eval {
                source,
                print,
                module,
                args,
            } => (if print { "print" } else { "eval" }, source, args, module),
            Program::Stdin { module, args } => ("stdin", String::new(), args, module),
            Program::Version | Program::Help => unreachable!("answered above"),
        };
        start.call::<_, ()>((kind, source, args, module))
    });
    let mut failed = started.is_err();
    if failed && exit.status.get().is_none() {
        context.with(|ctx| {
            let error = ctx.catch();
            report(&ctx, error);
        });
    }
    // The event loop: jobs, then the next timer, until neither is left.
    while !failed && exit.status.get().is_none() {
        loop {
            match runtime.execute_pending_job() {
                Ok(true) if exit.status.get().is_some() => break,
                Ok(true) => continue,
                Ok(false) => break,
                Err(job) => {
                    if exit.status.get().is_none() {
                        job.0.with(|ctx| {
                            let error = ctx.catch();
                            report(&ctx, error);
                        });
                        failed = true;
                    }
                    break;
                }
            }
        }
        if failed || exit.status.get().is_some() {
            break;
        }
        let wait = context.with(|ctx| -> rquickjs::Result<f64> {
            let node: Object = ctx.globals().get("__node")?;
            let tick: Function = node.get("tick")?;
            tick.call(())
        });
        match wait {
            Ok(wait) if wait < 0.0 => break,
            Ok(_) => {}
            Err(_) => {
                if exit.status.get().is_none() {
                    context.with(|ctx| {
                        let error = ctx.catch();
                        report(&ctx, error);
                    });
                    failed = true;
                }
            }
        }
    }
    if let Some(status) = exit.status.get() {
        // `process.exit`: the `exit` handlers run, then the run ends.
        exit.stopping.set(false);
        context.with(|ctx| {
            let handlers = (|| -> rquickjs::Result<()> {
                let node: Object = ctx.globals().get("__node")?;
                let emit: Function = node.get("emitExit")?;
                emit.call((status,))
            })();
            // A handler calling `process.exit` again ends the run with
            // that status; any other error in one is reported.
            if handlers.is_err() && !exit.stopping.get() {
                let error = ctx.catch();
                report(&ctx, error);
            }
        });
        return exit.status.get().unwrap_or(status);
    }
    // The end: a rejection nobody handled fails the run; `exit` handlers
    // run and `process.exitCode` is the status.
    let finished = context.with(|ctx| -> rquickjs::Result<i32> {
        let node: Object = ctx.globals().get("__node")?;
        let finish: Function = node.get("finish")?;
        finish
            .call((failed,))
            .catch(&ctx)
            .map_err(|_| rquickjs::Error::Exception)
    });
    match (exit.status.get(), finished) {
        (Some(status), _) => status,
        (None, Ok(status)) => status,
        (None, Err(_)) => 1,
    }
}

/// Prints an uncaught exception as Node does, through the script's own
/// `__node.report` when it can.
fn report<'js>(ctx: &rquickjs::Ctx<'js>, error: rquickjs::Value<'js>) {
    let printed = (|| -> rquickjs::Result<()> {
        let node: Object = ctx.globals().get("__node")?;
        let report: Function = node.get("report")?;
        report.call((error.clone(),))
    })();
    if printed.is_err() {
        let text = error
            .as_object()
            .and_then(|object| object.get::<_, String>("message").ok())
            .or_else(|| error.as_string().and_then(|text| text.to_string().ok()))
            .unwrap_or_else(|| "an uncaught exception".to_owned());
        eprintln!("Uncaught {text}");
    }
}
