//! The simulated vehicle's topics: which keys it publishes, with which registry schema, how
//! often, which publisher sends no timestamps, and the topic it advertises but never publishes.
//!
//! One table for the live simulator (`bag sim`, the scope's live demo) and the scope's recorded
//! demo, so both show the same car; [`Schedule`] puts its messages in the order they are due.
//! What each message says is [`crate::sample`]'s.
//!
//! ```
//! use schemas::vehicle::{Schedule, TOPICS};
//!
//! // The first second of the drive: every topic's messages, in time order.
//! let second: Vec<_> = Schedule::new().take_while(|due| due.t_secs < 1.0).collect();
//! let imu = second.iter().filter(|due| due.topic.topic == "car/imu").count();
//! assert_eq!(imu, 200);
//! assert!(second.windows(2).all(|w| w[0].t_secs <= w[1].t_secs));
//! assert!(TOPICS.iter().all(|t| schemas::by_name(t.schema).is_some()));
//! ```

/// A topic the simulated vehicle publishes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimTopic {
    /// Zenoh key, and the topic it is recorded under.
    pub topic: &'static str,
    /// Registry schema name ([`crate::by_name`]).
    pub schema: &'static str,
    /// Messages per second.
    pub rate_hz: f64,
    /// False for the one publisher that sends no timestamps (the battery monitor).
    pub stamped: bool,
}

impl SimTopic {
    const fn stamped(topic: &'static str, schema: &'static str, rate_hz: f64) -> Self {
        SimTopic {
            topic,
            schema,
            rate_hz,
            stamped: true,
        }
    }
}

/// What the simulated vehicle publishes.
pub const TOPICS: &[SimTopic] = &[
    SimTopic::stamped("car/imu", "Imu", 200.0),
    SimTopic::stamped("car/wheels", "WheelSpeeds", 100.0),
    SimTopic::stamped("car/engine", "EngineRpm", 50.0),
    SimTopic::stamped("car/driver", "DriverInputs", 50.0),
    SimTopic::stamped("car/gnss", "GnssFix", 10.0),
    SimTopic {
        topic: "car/battery",
        schema: "Battery",
        rate_hz: 2.0,
        stamped: false,
    },
    SimTopic::stamped("car/diagnostics", "DiagnosticLog", 0.5),
];

/// A topic advertised and never published on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SilentTopic {
    /// Zenoh key.
    pub topic: &'static str,
    /// Registry schema name.
    pub schema: &'static str,
}

/// The topic the simulated vehicle advertises and never publishes on (a camera that never came
/// up).
pub const SILENT_TOPIC: SilentTopic = SilentTopic {
    topic: "car/camera/front",
    schema: "DiagnosticLog",
};

/// One message of the drive, when it is due.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Due {
    /// Position of its topic in [`TOPICS`].
    pub index: usize,
    /// Its topic.
    pub topic: &'static SimTopic,
    /// Its number within its topic, from 0.
    pub seq: u64,
    /// When it is due, seconds from the start of the drive: `seq / rate`.
    pub t_secs: f64,
}

/// The messages of [`TOPICS`] in the order they are due, without end: message `seq` of a topic
/// is due `seq / rate` seconds into the drive, and messages due at the same time come in the
/// order of the table.
#[derive(Debug, Clone)]
pub struct Schedule {
    next_seq: Vec<u64>,
}

impl Schedule {
    /// The schedule from the start of the drive.
    pub fn new() -> Self {
        Schedule {
            next_seq: vec![0; TOPICS.len()],
        }
    }
}

impl Default for Schedule {
    fn default() -> Self {
        Self::new()
    }
}

impl Iterator for Schedule {
    type Item = Due;

    fn next(&mut self) -> Option<Due> {
        // `min_by` keeps the first of equal elements: the table's order breaks ties.
        let (index, t_secs) = TOPICS
            .iter()
            .zip(&self.next_seq)
            .map(|(topic, &seq)| seq as f64 / topic.rate_hz)
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        let topic = TOPICS.get(index)?;
        let seq = self.next_seq.get_mut(index)?;
        let due = Due {
            index,
            topic,
            seq: *seq,
            t_secs,
        };
        *seq += 1;
        Some(due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_topic_comes_at_its_rate_in_time_order() {
        let minute: Vec<Due> = Schedule::new().take_while(|d| d.t_secs < 60.0).collect();
        assert!(minute.windows(2).all(|w| w[0].t_secs <= w[1].t_secs));
        for (index, topic) in TOPICS.iter().enumerate() {
            let seqs: Vec<u64> = minute
                .iter()
                .filter(|d| d.index == index)
                .map(|d| d.seq)
                .collect();
            let expected = (60.0 * topic.rate_hz).ceil() as u64;
            assert_eq!(seqs, (0..expected).collect::<Vec<_>>(), "{}", topic.topic);
            assert!(
                minute
                    .iter()
                    .filter(|d| d.index == index)
                    .all(|d| { d.topic == topic && d.t_secs == d.seq as f64 / topic.rate_hz })
            );
        }
    }

    #[test]
    fn ties_go_in_table_order() {
        let start: Vec<usize> = Schedule::new()
            .take(TOPICS.len())
            .map(|d| d.index)
            .collect();
        assert_eq!(start, (0..TOPICS.len()).collect::<Vec<_>>());
    }

    #[test]
    fn every_schema_is_registered_and_the_silent_topic_is_not_published() {
        for topic in TOPICS {
            assert!(crate::by_name(topic.schema).is_some(), "{}", topic.schema);
            assert!(topic.rate_hz > 0.0, "{}", topic.topic);
        }
        assert!(crate::by_name(SILENT_TOPIC.schema).is_some());
        assert!(TOPICS.iter().all(|t| t.topic != SILENT_TOPIC.topic));
        assert_eq!(TOPICS.iter().filter(|t| !t.stamped).count(), 1);
    }
}
