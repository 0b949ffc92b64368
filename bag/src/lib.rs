//! Redline bags: a directory of MCAP parts plus `metadata.yaml`.
//!
//! - [`BagWriter`] writes rolling parts that survive a killed writer, and an index that says
//!   what MCAP cannot: dropped and unstamped messages, topics advertised but never published.
//! - [`BagReader`] reads a bag directory, a single `.mcap` file or a rosbag2 directory as one
//!   stream in log-time order; torn parts are read up to their damage, missing and garbage parts
//!   are reported and skipped.
//! - [`DropQueue`] is the bounded queue between a transport callback and the writer.
//! - `live` (cargo feature `live`) connects all this to zenoh: subscriptions, publishers, the
//!   recorder and the simulator.
//!
//! ```
//! use bag::{BagReader, BagWriter, ChannelSpec, ReadFilter, WriteOptions};
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("drive");
//! let mut writer = BagWriter::create(&path, WriteOptions::new())?;
//! let rpm = writer.add_channel(ChannelSpec {
//!     topic: "car/engine/rpm".into(),
//!     message_encoding: "json".into(),
//!     schema: None,
//!     metadata: Default::default(),
//! });
//! writer.write(rpm, 1_000, Some(990), br#"{"rpm": 812}"#)?;
//! writer.write(rpm, 2_000, None, br#"{"rpm": 815}"#)?; // unstamped: counted
//! let summary = writer.close()?;
//! assert_eq!(summary.unstamped_messages, 1);
//!
//! let reader = BagReader::open(&path)?;
//! let mut messages = reader.messages(&ReadFilter::all())?;
//! let first = messages.next_message().unwrap();
//! assert_eq!((first.log_time_ns, first.publish_time_ns), (1_000, 990));
//! # Ok::<(), bag::BagError>(())
//! ```

pub mod channel;
mod chunk_cursor;
mod compressed_message;
mod decompressed;
pub mod drop_queue;
pub mod error;
pub mod export;
pub mod filter;
pub mod format;
mod id_map;
mod layout;
#[cfg(feature = "live")]
pub mod live;
pub mod message;
pub mod metadata;
pub mod part;
mod part_writer;
pub mod reader;
pub mod reindex;
pub mod ros1_bag;
mod scan;
pub mod sqlite_part;
pub mod verify;
mod write_behind;
pub mod writer;
pub mod writer_lock;

pub use channel::{ChannelInfo, ChannelSpec, Profile, REGISTRY_SCHEMA_KEY, SchemaSpec};
pub use compressed_message::DecompressError;
pub use decompressed::Decompressing;
pub use drop_queue::DropQueue;
pub use error::{BagError, Result};
pub use filter::ReadFilter;
pub use format::{Compression, FormatError};
pub use message::{ChunkDamage, Message, MessageRef, ReadIssue};
pub use metadata::{Metadata, PartState};
pub use part::{Attachment, PartInfo, PartStatus};
pub use reader::{BagReader, IndexState, MessageCursor, RecordingKind};
pub use scan::Damage;
pub use writer::{BagSummary, BagWriter, ChannelId, WriteOptions};
