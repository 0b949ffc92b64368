//! Redline bags: MCAP parts plus `metadata.yaml`.

pub mod verify;
