//! `bag play`: a recording's messages published on zenoh, paced by log time.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context;
use bag::live::{
    LivePublisher, TopicSchema, ZenohArgs, advertise, encoding_for, key_for_topic, serve_schema,
};
use bag::{REGISTRY_SCHEMA_KEY, ReadFilter};
use clap::Args;

use super::Outcome;
use super::live_command::{self, stop_on_ctrl_c};
use super::loss::report_loss;
use super::progress::Status;

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// A bag directory, a .mcap file or a rosbag2 directory.
    path: PathBuf,
    #[command(flatten)]
    zenoh: ZenohArgs,
    /// Speed: 2 plays twice as fast, 0.5 at half speed.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    rate: f64,
    /// Start this many seconds into the recording (a seek through the index, not a scan).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    start_offset: f64,
    /// Only these topics (repeat or separate with commas).
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    topics: Vec<String>,
    /// Start again from the start offset at the end.
    #[arg(long = "loop")]
    looping: bool,
    /// Wait up to this many seconds for a subscriber before publishing the first message.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    wait: f64,
}

pub fn run(args: &PlayArgs) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        args.rate.is_finite() && args.rate > 0.0,
        "--rate must be a positive number, not {}",
        args.rate
    );
    anyhow::ensure!(
        args.start_offset.is_finite() && args.start_offset >= 0.0,
        "--start-offset must be a non-negative number of seconds"
    );
    let reader = super::progress::open_recording(&args.path)?;
    let Some((t0, t1)) = reader.time_range_ns() else {
        anyhow::bail!("{} holds no messages to play", args.path.display());
    };
    let start_ns = t0.saturating_add((args.start_offset * 1e9) as u64);
    anyhow::ensure!(
        start_ns <= t1,
        "--start-offset {} s is past the end of the recording ({:.3} s long)",
        args.start_offset,
        (t1 - t0) as f64 / 1e9
    );
    let mut filter = ReadFilter::all().start_ns(start_ns);
    if !args.topics.is_empty() {
        let known: Vec<&str> = reader
            .channels()
            .iter()
            .map(|c| c.spec.topic.as_str())
            .collect();
        for t in &args.topics {
            anyhow::ensure!(
                known.contains(&t.as_str()),
                "no topic {t:?} in the recording"
            );
        }
        filter = filter.topics(args.topics.iter().cloned());
    }

    let stop = stop_on_ctrl_c()?;
    let session = live_command::open(&args.zenoh)?;
    let mut publishers = Vec::new();
    // Subscribers ask for the schemas our registry does not hold; they live as long as these.
    let mut schema_queryables = Vec::new();
    for channel in reader.channels() {
        let key = key_for_topic(&channel.spec.topic);
        let wanted = args.topics.is_empty() || args.topics.contains(&channel.spec.topic);
        if !wanted || key.is_empty() {
            publishers.push(None);
            continue;
        }
        let mut publisher =
            LivePublisher::with_encoding(&session, &key, &encoding_for(&channel.spec))
                .with_context(|| format!("topic {:?}", channel.spec.topic))?;
        if let Some(schema) = channel.spec.metadata.get(REGISTRY_SCHEMA_KEY) {
            publisher = publisher.advertised(schema)?;
        }
        if let Some(schema) = TopicSchema::of(&channel.spec) {
            schema_queryables.push(serve_schema(&session, &key, &schema)?);
        }
        publishers.push(Some(publisher));
    }
    // Topics the recording says were advertised and never published are advertised again.
    let _silent = reader
        .advertised_never_published()
        .iter()
        .map(|a| advertise(&session, &a.schema, &key_for_topic(&a.topic)))
        .collect::<Result<Vec<_>, _>>()?;
    let waited = Instant::now();
    let deadline = Duration::from_secs_f64(args.wait.clamp(0.0, 3600.0));
    while !publishers
        .iter()
        .flatten()
        .any(LivePublisher::has_subscribers)
    {
        if waited.elapsed() >= deadline || stop.load(Ordering::SeqCst) {
            eprintln!("note: no subscriber yet; publishing anyway");
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "playing {} at {}x from {} s ({}); Ctrl-C stops",
        args.path.display(),
        args.rate,
        args.start_offset,
        args.zenoh.options().describe()
    );

    let status = Status::new();
    let mut published = 0u64;
    let mut issues = Vec::new();
    'rounds: loop {
        let mut cursor = reader.messages(&filter)?;
        let started = Instant::now();
        let mut base_ns = None;
        while let Some(m) = cursor.next_message() {
            let base = *base_ns.get_or_insert(m.log_time_ns);
            // A tiny --rate can put a message past any representable wait: it never comes.
            let due = Duration::try_from_secs_f64(
                m.log_time_ns.saturating_sub(base) as f64 / 1e9 / args.rate,
            )
            .unwrap_or(Duration::MAX);
            loop {
                if stop.load(Ordering::SeqCst) {
                    break 'rounds;
                }
                let wait = due.saturating_sub(started.elapsed());
                if wait.is_zero() {
                    break;
                }
                std::thread::sleep(wait.min(Duration::from_millis(100)));
            }
            if let Some(Some(publisher)) = publishers.get(m.channel.id) {
                publisher.put(m.data)?;
                published += 1;
                if published.is_multiple_of(256) {
                    status.set(format!(
                        "{:.1} s  {published} messages",
                        m.log_time_ns.saturating_sub(t0) as f64 / 1e9
                    ));
                }
            }
        }
        if issues.is_empty() {
            issues.extend(cursor.issues().iter().cloned());
        }
        if !args.looping || stop.load(Ordering::SeqCst) {
            break;
        }
    }
    status.finish();
    drop(publishers);
    drop(schema_queryables);
    if let Err(e) = bag::live::close(session) {
        eprintln!("warning: {e}");
    }
    outln!("published {published} messages");
    // A torn, partial or lossy recording plays what it has, and says what it lacks.
    Ok(report_loss(&reader, &issues))
}
