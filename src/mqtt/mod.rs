//! MQTT: the topic scheme and payloads (DESIGN.md §5, docs/MQTT-API.md) and the connection
//! task. The commands it carries are parsed by `crate::intake::command`, shared with the web.

pub mod client;
pub mod feed;
pub mod foreign;
pub mod owned;
pub mod payload;
mod window;

pub use client::{MqttSettings, Publisher};
pub use payload::Topics;
