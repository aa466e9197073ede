//! `hallclock run --config FILE`: the daemon.

use std::process::ExitCode;

use super::config::{ConfigArgs, load};

pub fn run(args: ConfigArgs) -> ExitCode {
    let config = match load(&args.config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    crate::daemon::init_logging(&config.log.level);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // One worker fewer than the cores, at least one: the MQTT connection has a thread of
    // its own, and the kernel's serial work and the journal's writer want a share of a
    // core too. At 5000 boards on two cores one worker took 26.7-27.7 % of a core against
    // 30.1-31.0 % with two, with 6200 wake-ups a second against 8800, and the same press
    // latencies (docs/BENCHMARKS.md). TOKIO_WORKER_THREADS, tokio's own, still decides
    // when it is set.
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(workers(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        ));
    }
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hallclock run: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(crate::daemon::run(config, args.config.clone())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime's worker threads on a machine of `cores` cores.
fn workers(cores: usize) -> usize {
    cores.saturating_sub(1).max(1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_worker_fewer_than_the_cores_and_never_none() {
        assert_eq!(super::workers(0), 1);
        assert_eq!(super::workers(1), 1);
        assert_eq!(super::workers(2), 1);
        assert_eq!(super::workers(4), 3);
    }
}
