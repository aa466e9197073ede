//! MQTT: the topic scheme and payloads (DESIGN.md §5, docs/MQTT-API.md), command intake,
//! and the connection task.

pub mod client;
pub mod command;
pub mod feed;
pub mod payload;

pub use client::{Incoming, MqttSettings, Publisher};
pub use payload::Topics;
