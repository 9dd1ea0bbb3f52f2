//! One run of a program, start to end: a QuickJS runtime with Node's
//! globals, the program started as `node` starts it, then the event loop:
//! `process.nextTick` callbacks and promise jobs drained, timers fired in
//! order (waiting for the next), until nothing keeps the script running or
//! `process.exit` is called. An uncaught exception no `uncaughtException`
//! listener takes, or a rejection no `unhandledRejection` listener takes,
//! ends the run with status 1 as in Node.

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
        let start: Function = node_function(&ctx, "start")?;
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
    let mut failed = false;
    if started.is_err() && exit.status.get().is_none() {
        failed = !context.with(|ctx| {
            let error = ctx.catch();
            uncaught(&ctx, error)
        });
    }
    // The event loop, as Node's: `process.nextTick` callbacks, then promise
    // jobs, again while either is left; then the next timer; until nothing
    // keeps the script running.
    while !failed && exit.status.get().is_none() {
        failed = !settle(&runtime, &context, &exit);
        if failed || exit.status.get().is_some() {
            break;
        }
        let fired = context.with(|ctx| -> rquickjs::Result<f64> {
            let tick: Function = node_function(&ctx, "tick")?;
            tick.call(())
        });
        match fired {
            Ok(left) if left < 0.0 => break,
            Ok(_) => {}
            Err(_) if exit.status.get().is_some() => break,
            Err(_) => {
                failed = !context.with(|ctx| {
                    let error = ctx.catch();
                    uncaught(&ctx, error)
                });
            }
        }
    }
    if let Some(status) = exit.status.get() {
        // `process.exit`: the `exit` handlers run, then the run ends.
        exit.stopping.set(false);
        context.with(|ctx| {
            let handlers =
                node_function(&ctx, "emitExit").and_then(|emit| emit.call::<_, ()>((status,)));
            // A handler calling `process.exit` again ends the run with
            // that status; any other error in one is reported.
            if handlers.is_err() && !exit.stopping.get() {
                let error = ctx.catch();
                report(&ctx, error);
            }
        });
        return exit.status.get().unwrap_or(status);
    }
    // The end: the `exit` handlers run and `process.exitCode` (or 1 after a
    // failure) is the status.
    let finished = context.with(|ctx| -> rquickjs::Result<i32> {
        let finish: Function = node_function(&ctx, "finish")?;
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

/// Runs `process.nextTick` callbacks and promise jobs until neither is
/// left, then fails the run on a rejection nobody handled; whether the run
/// goes on (an uncaught error an `uncaughtException` listener took does
/// not end it).
fn settle(runtime: &Runtime, context: &Context, exit: &Exit) -> bool {
    loop {
        let ticks = context
            .with(|ctx| node_function(&ctx, "runTicks").and_then(|run| run.call::<_, ()>(())));
        if ticks.is_err() {
            if exit.status.get().is_some() {
                return true;
            }
            let handled = context.with(|ctx| {
                let error = ctx.catch();
                uncaught(&ctx, error)
            });
            if !handled {
                return false;
            }
        }
        loop {
            match runtime.execute_pending_job() {
                Ok(true) if exit.status.get().is_some() => return true,
                Ok(true) => continue,
                Ok(false) => break,
                Err(_) if exit.status.get().is_some() => return true,
                Err(job) => {
                    let handled = job.0.with(|ctx| {
                        let error = ctx.catch();
                        uncaught(&ctx, error)
                    });
                    if !handled {
                        return false;
                    }
                }
            }
        }
        let (more, rejected) = context.with(|ctx| {
            let more = node_function(&ctx, "hasTicks")
                .and_then(|has| has.call::<_, bool>(()))
                .unwrap_or(false);
            let rejected = node_function(&ctx, "checkRejections")
                .and_then(|check| check.call::<_, bool>(()))
                .unwrap_or(true);
            (more, rejected)
        });
        if rejected && exit.status.get().is_none() {
            return false;
        }
        if !more || exit.status.get().is_some() {
            return true;
        }
    }
}

/// The function `name` of the script's `__node`.
fn node_function<'js>(ctx: &rquickjs::Ctx<'js>, name: &str) -> rquickjs::Result<Function<'js>> {
    let node: Object = ctx.globals().get("__node")?;
    node.get(name)
}

/// Hands an uncaught exception to the script's `uncaughtException`
/// listeners, or prints Node's report of it; whether a listener took it.
fn uncaught<'js>(ctx: &rquickjs::Ctx<'js>, error: rquickjs::Value<'js>) -> bool {
    let handled = node_function(ctx, "uncaught")
        .and_then(|uncaught| uncaught.call::<_, bool>((error.clone(),)));
    match handled {
        Ok(handled) => handled,
        Err(_) => {
            report(ctx, error);
            false
        }
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
