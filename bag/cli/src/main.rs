//! `bag`: inspect, print, verify and repair Redline bags and other MCAP recordings.

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc's malloc. `bag record` allocates each message on a zenoh thread
/// and frees it on the recorder's; glibc frees such memory under its arena's lock, which the
/// receiving thread then waits on (`perf` showed futex wake-ups in the subscriber's callback).
/// mimalloc frees across threads without a lock.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(_) if cli::stdout_failed() => ExitCode::from(1),
        Ok(outcome) => outcome.exit_code(),
        Err(err) => {
            eprintln!("error: {err:#}");
            if err.downcast_ref::<cli::UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
