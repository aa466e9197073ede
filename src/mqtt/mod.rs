//! MQTT: the topic scheme and payloads (DESIGN.md §5, docs/MQTT-API.md) and the connection
//! task. The commands it carries are parsed by `crate::intake::command`, shared with the web.

pub mod client;
pub mod connect;
pub mod feed;
pub mod foreign;
mod mirror;
pub mod owned;
pub mod payload;
mod session;
pub mod twin;
mod window;

pub use client::Publisher;
pub use connect::MqttSettings;
pub use payload::Topics;
