//! Stack overflows as findings. libFuzzer's program has no Rust runtime start, so no thread has
//! an alternate signal stack: a stack overflow's SIGSEGV then cannot run libFuzzer's handler,
//! the kernel kills the process, and the input is lost. Here every thread that runs code under
//! test gets an alternate stack, and libFuzzer's SIGSEGV and SIGBUS handlers are set to run on
//! it, so an overflow is reported and its input written like any crash.
//!
//! Code that toolgate runs on a spawned thread in production (CEL evaluation on a tokio worker,
//! resolution on rayon's pool) runs here on a thread with the same 2 MiB stack
//! ([`on_thread_stack`]), not on the 8 MiB main thread, where it would overflow later.
#![allow(unsafe_code, dead_code)]

use std::sync::Once;

/// The stack of a spawned Rust thread, a tokio worker and a rayon worker by default.
pub const THREAD_STACK: usize = 2 * 1024 * 1024;

/// The alternate stack's size: libFuzzer's handler formats and writes a report on it.
const ALT_STACK: usize = 256 * 1024;

/// An alternate signal stack for the calling thread, given back by [`AltStack::drop`].
pub struct AltStack {
    memory: Vec<u8>,
}

impl AltStack {
    /// Installs an alternate signal stack for the calling thread.
    pub fn install() -> AltStack {
        let mut memory = vec![0u8; ALT_STACK];
        let ss = libc::stack_t {
            ss_sp: memory.as_mut_ptr().cast(),
            ss_flags: 0,
            ss_size: ALT_STACK,
        };
        // SAFETY: `ss` points at memory this value owns and keeps until drop, which uninstalls
        // the stack first.
        unsafe { libc::sigaltstack(&ss, std::ptr::null_mut()) };
        AltStack { memory }
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        let ss = libc::stack_t {
            ss_sp: std::ptr::null_mut(),
            ss_flags: libc::SS_DISABLE,
            ss_size: 0,
        };
        // SAFETY: disabling the calling thread's alternate stack before its memory is freed.
        unsafe { libc::sigaltstack(&ss, std::ptr::null_mut()) };
        let _ = self.memory.len();
    }
}

/// Once per process: the main thread's alternate stack, and libFuzzer's (already installed)
/// SIGSEGV and SIGBUS handlers set to run on the alternate stack.
pub fn prepare() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::mem::forget(AltStack::install());
        // toolgate's loader and resolver run on rayon's global pool: the same stack as
        // rayon's default, and an alternate stack for each of its threads.
        let _ = rayon::ThreadPoolBuilder::new()
            .stack_size(THREAD_STACK)
            .start_handler(|_| std::mem::forget(AltStack::install()))
            .build_global();
        for sig in [libc::SIGSEGV, libc::SIGBUS] {
            // SAFETY: reads the current handler and installs it again with one more flag.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut act) == 0 {
                    act.sa_flags |= libc::SA_ONSTACK;
                    libc::sigaction(sig, &act, std::ptr::null_mut());
                }
            }
        }
    });
}

/// Runs `f` on a new thread with a [`THREAD_STACK`] stack and an alternate signal stack.
pub fn on_thread_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    prepare();
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .stack_size(THREAD_STACK)
            .spawn_scoped(s, || {
                let _alt = AltStack::install();
                f()
            });
        match worker {
            Ok(handle) => match handle.join() {
                Ok(r) => r,
                // libFuzzer's panic hook aborts first; this only keeps the type honest.
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(e) => {
                eprintln!("fuzz setup: cannot start a thread: {e}");
                std::process::exit(2);
            }
        }
    })
}
