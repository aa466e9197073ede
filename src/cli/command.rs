//! `hallclock command`: one signed command to the hall, its response printed; exit 0 when
//! the daemon answered `ok`, 1 otherwise (refused, no answer, bad arguments). For people
//! and scripts; dashboards sign the same way (docs/MQTT-API.md, Signing).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::Value;

use crate::intake::auth::Key;

#[derive(Debug, clap::Args)]
pub struct CommandArgs {
    /// The hall id (`hallclock/<hall>/…`).
    #[arg(long)]
    pub hall: String,
    /// A board command for this board (`board/<b>/set`); without it, a hall command.
    #[arg(long)]
    pub board: Option<String>,
    /// The account that signs.
    #[arg(long)]
    pub arbiter: String,
    /// The file with the account's key (as `hallclock arbiter add --key-file` writes it).
    #[arg(long)]
    pub key_file: PathBuf,
    /// The broker, HOST:PORT.
    #[arg(long, default_value = "localhost:1883")]
    pub broker: String,
    #[arg(long)]
    pub username: Option<String>,
    #[arg(long)]
    pub password: Option<String>,
    /// How long to wait for the response, in seconds.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// The command, JSON (`transaction` is added when absent, `ts` always).
    pub command: String,
}

pub fn run(args: CommandArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hallclock command: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(send(args)) {
        Ok(response) => {
            println!("{response}");
            if response["status"] == "ok" {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("hallclock command: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn send(args: CommandArgs) -> Result<Value, String> {
    let key = Key::read_file(&args.key_file).map_err(|e| e.to_string())?;
    let mut command: Value =
        serde_json::from_str(&args.command).map_err(|e| format!("the command is not JSON: {e}"))?;
    let Value::Object(fields) = &mut command else {
        return Err("the command must be a JSON object".into());
    };
    let transaction = match fields.get("transaction").and_then(Value::as_str) {
        Some(t) => t.to_string(),
        None => {
            let t = format!("cli-{}-{}", args.arbiter, crate::custody::fresh_nonce());
            fields.insert("transaction".into(), Value::from(t.clone()));
            t
        }
    };
    let (host, port) = args
        .broker
        .rsplit_once(':')
        .and_then(|(h, p)| p.parse::<u16>().ok().map(|p| (h.to_string(), p)))
        .ok_or_else(|| format!("--broker {}: expected HOST:PORT", args.broker))?;
    let base = format!("hallclock/{}", args.hall);
    let (set, response) = match &args.board {
        Some(b) => (
            format!("{base}/board/{b}/set"),
            format!("{base}/board/{b}/response"),
        ),
        None => (format!("{base}/set"), format!("{base}/response")),
    };
    let mut opts = MqttOptions::new(
        format!("hallclock-command-{}", std::process::id()),
        host,
        port,
    );
    opts.set_keep_alive(Duration::from_secs(5));
    opts.set_max_packet_size(1 << 20, 1 << 20);
    if let Some(user) = &args.username {
        opts.set_credentials(user, args.password.clone().unwrap_or_default());
    }
    let (client, mut events) = AsyncClient::new(opts, 16);
    let wait = async {
        let mut sent = false;
        loop {
            match events.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    client
                        .subscribe(&response, QoS::AtLeastOnce)
                        .await
                        .map_err(|e| e.to_string())?;
                }
                // Signed after the subscription: the response cannot be missed, and `ts`
                // is as fresh as it can be.
                Ok(Event::Incoming(Packet::SubAck(_))) if !sent => {
                    sent = true;
                    let signed = crate::intake::auth::sign_now(
                        &args.arbiter,
                        &key,
                        &set,
                        command.clone(),
                        crate::timebase::Timebase::start().now(),
                    );
                    client
                        .publish(&set, QoS::AtLeastOnce, false, signed)
                        .await
                        .map_err(|e| e.to_string())?;
                }
                Ok(Event::Incoming(Packet::Publish(p))) if p.topic == response => {
                    let v: Value = serde_json::from_slice(&p.payload).unwrap_or(Value::Null);
                    if v["transaction"] == transaction.as_str() {
                        return Ok(v);
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(format!("broker {}: {e}", args.broker)),
            }
        }
    };
    let r = tokio::time::timeout(Duration::from_secs(args.timeout), wait)
        .await
        .map_err(|_| {
            format!(
                "no response on {response} within {} s (is the daemon running, the hall id right?)",
                args.timeout
            )
        })?;
    let _ = client.disconnect().await;
    r
}
