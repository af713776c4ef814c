//! Measures the Kafka admin client against a fresh test broker: time to create 1,000 topics
//! in batches, describe them and their configs, delete them, and the client's memory.
//!
//! `cargo run --release -p strimzi-operator-common --example kafka_admin_bench [topics] [batch]`

use std::error::Error;
use std::time::Instant;

use strimzi_operator_common::kafka::{
    AdminClient, AdminConfig, ConfigResource, KafkaAdmin, NewTopic,
};
use strimzi_tests::kafka::KafkaBroker;
use strimzi_tests::layout::log_dir;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let topics: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let batch: usize = args.next().map_or(Ok(100), |a| a.parse())?;
    let broker = KafkaBroker::start(&log_dir("kafka-admin-bench")?)?;
    let bootstrap = &broker
        .listener("plain")
        .ok_or("the broker has no plain listener")?
        .bootstrap;
    let rss_before = rss_kib()?;
    let admin = AdminClient::new(AdminConfig::plaintext(bootstrap))?;
    let names: Vec<String> = (0..topics).map(|i| format!("bench-{i:05}")).collect();

    let started = Instant::now();
    for chunk in names.chunks(batch) {
        let new: Vec<NewTopic> = chunk
            .iter()
            .map(|name| {
                let mut topic = NewTopic::new(name);
                topic.partitions = Some(1);
                topic
                    .configs
                    .insert("retention.ms".into(), "3600000".into());
                topic
            })
            .collect();
        let results = admin.create_topics(&new, false).await?;
        if let Some((name, Err(error))) = results.iter().find(|(_, r)| r.is_err()) {
            return Err(format!("creating {name}: {error}").into());
        }
    }
    report("create topics", topics, batch, started);

    let started = Instant::now();
    while count_described(&admin, &names, batch).await? < topics {}
    report("wait until the broker serves all", topics, batch, started);

    let started = Instant::now();
    count_described(&admin, &names, batch).await?;
    report("describe topics", topics, batch, started);

    let started = Instant::now();
    let mut entries = 0;
    for chunk in names.chunks(batch) {
        let resources: Vec<ConfigResource> = chunk.iter().map(ConfigResource::topic).collect();
        for (resource, result) in admin.describe_configs(&resources).await? {
            entries += result
                .map_err(|error| format!("describing {}: {error}", resource.name))?
                .len();
        }
    }
    report("describe configs", topics, batch, started);
    println!("  ({entries} config entries)");

    let started = Instant::now();
    let all: Vec<ConfigResource> = names.iter().map(ConfigResource::topic).collect();
    let described = admin.describe_configs(&all).await?;
    report("describe configs, one request", topics, topics, started);
    println!("  ({} resources)", described.len());
    drop(described);

    let rss_after = rss_kib()?;
    let started = Instant::now();
    for chunk in names.chunks(batch) {
        admin.delete_topics(chunk).await?;
    }
    report("delete topics", topics, batch, started);
    println!(
        "process RSS: {rss_before} KiB before the client, {rss_after} KiB after creating and \
         describing {topics} topics (+{} KiB); peak {} KiB",
        rss_after.saturating_sub(rss_before),
        peak_kib()?
    );
    Ok(())
}

/// How many of `names` the broker describes.
async fn count_described(
    admin: &AdminClient,
    names: &[String],
    batch: usize,
) -> Result<usize, Box<dyn Error>> {
    let mut described = 0;
    for chunk in names.chunks(batch) {
        let results = admin.describe_topics(chunk).await?;
        described += results.values().filter(|result| result.is_ok()).count();
    }
    Ok(described)
}

fn report(what: &str, topics: usize, batch: usize, started: Instant) {
    let elapsed = started.elapsed();
    println!(
        "{what}: {topics} topics in batches of {batch}: {:.3} s ({:.0} topics/s)",
        elapsed.as_secs_f64(),
        topics as f64 / elapsed.as_secs_f64()
    );
}

fn status_kib(field: &str) -> Result<u64, Box<dyn Error>> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|line| line.starts_with(field))
        .ok_or_else(|| format!("no {field} in /proc/self/status"))?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .ok_or("malformed status line")?
        .parse()?)
}

fn rss_kib() -> Result<u64, Box<dyn Error>> {
    status_kib("VmRSS:")
}

fn peak_kib() -> Result<u64, Box<dyn Error>> {
    status_kib("VmHWM:")
}
