//! RSA-4096 keys per second: ours (`keys::generate`) on one thread and on every core, next
//! to the `openssl genrsa 4096` command measured in the same run, also on one and on every
//! core. Run with `cargo bench -p strimzi-certificate-manager --bench key_generation`;
//! `KEYS=N` changes how many keys each line generates (default 16). Generation time varies a
//! lot from key to key (it is a search for primes), so a few keys give a rough figure only.
//! Figures are printed, never asserted.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use strimzi_certificate_manager::keys::{self, KeyAlgorithm};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: usize = std::env::var("KEYS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(16)
        .max(1);
    let threads = std::thread::available_parallelism().map_or(1, |threads| threads.get());
    println!("RSA-4096 key generation, {count} keys per line, {threads} cores");
    println!("{:<32} {:>10} {:>10}", "what", "keys/s", "per key");

    let ours = |_: usize| {
        keys::generate(KeyAlgorithm::Rsa4096)
            .map(drop)
            .map_err(|error| error.to_string())
    };
    report("ours, 1 thread", count, || run(count, 1, ours))?;
    report(&format!("ours, {threads} threads"), count, || {
        run(count, threads, ours)
    })?;

    let openssl = |_: usize| openssl_genrsa();
    match openssl_genrsa() {
        Err(error) => println!("openssl genrsa: not measured: {error}"),
        Ok(()) => {
            report("openssl genrsa, 1 process", count, || {
                run(count, 1, openssl)
            })?;
            report(
                &format!("openssl genrsa, {threads} processes"),
                count,
                || run(count, threads, openssl),
            )?;
        }
    }
    Ok(())
}

/// Prints one line: keys per second and time per key of `measure`, which makes `count` keys.
fn report(
    what: &str,
    count: usize,
    measure: impl FnOnce() -> Result<Duration, String>,
) -> Result<(), String> {
    let elapsed = measure()?;
    let seconds = elapsed.as_secs_f64();
    println!(
        "{what:<32} {:>10.2} {:>10.2?}",
        count as f64 / seconds,
        elapsed / u32::try_from(count).unwrap_or(u32::MAX),
    );
    Ok(())
}

/// Runs `make_key` `count` times on `threads` threads, which take the next key to make from
/// a shared counter, and returns the wall-clock time.
fn run(
    count: usize,
    threads: usize,
    make_key: impl Fn(usize) -> Result<(), String> + Sync,
) -> Result<Duration, String> {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| -> Result<(), String> {
                    loop {
                        let key = next.fetch_add(1, Ordering::Relaxed);
                        if key >= count {
                            return Ok(());
                        }
                        make_key(key)?;
                    }
                })
            })
            .collect();
        workers.into_iter().try_for_each(|worker| {
            worker
                .join()
                .map_err(|_| "a key generation thread panicked".to_owned())?
        })
    })?;
    Ok(started.elapsed())
}

/// Runs `openssl genrsa 4096` once, discarding the key.
fn openssl_genrsa() -> Result<(), String> {
    let status = Command::new("openssl")
        .args(["genrsa", "4096"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => {
                "the `openssl` binary is not on PATH (Debian: apt-get install openssl)".to_owned()
            }
            _ => format!("`openssl genrsa` could not be started: {error}"),
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`openssl genrsa 4096` failed ({status})"))
    }
}
