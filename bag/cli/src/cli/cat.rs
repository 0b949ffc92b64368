//! `bag cat`: one message per line in log-time order, decoded where the schema allows.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::Context;
use bag::ChannelInfo;
use base64::Engine;
use decode::{Plan, Scalar, SchemaSource};
use serde_json::{Map, Value, json};

use super::format::utc;
use super::loss::report_loss;
use super::{Outcome, Range};

pub fn run(path: &Path, range: &Range, as_json: bool, with_data: bool) -> anyhow::Result<Outcome> {
    let reader = super::progress::open_recording(path)?;
    let resolved = range.resolve(&reader)?;
    if let Some(why) = &resolved.nothing {
        eprintln!("warning: nothing to print: {why}");
    }
    let filter = resolved.filter;

    let mut plans: HashMap<usize, Result<Plan, String>> = HashMap::new();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut cursor = reader.messages(&filter)?;
    while let Some(m) = cursor.next_message() {
        let line = if as_json {
            let plan = plans
                .entry(m.channel.id)
                .or_insert_with(|| compile(m.channel));
            let mut object = json!({
                "topic": m.channel.spec.topic,
                "log_time": m.log_time_ns,
                "publish_time": m.publish_time_ns,
                "sequence": m.sequence,
                "schema": m.channel.spec.type_name(),
                "size": m.data.len(),
            });
            if with_data {
                object["data_b64"] =
                    Value::String(base64::engine::general_purpose::STANDARD.encode(m.data));
            }
            match plan {
                Ok(plan) => match plan.decode_fields(m.data) {
                    Ok(fields) => object["fields"] = fields_json(fields),
                    Err(e) => object["decode_error"] = Value::String(e.to_string()),
                },
                Err(e) => object["decode_error"] = Value::String(e.clone()),
            }
            object.to_string()
        } else {
            format!(
                "{} {} [{}] seq={} {} bytes",
                utc(m.log_time_ns),
                m.channel.spec.topic,
                m.channel.spec.type_name(),
                m.sequence,
                m.data.len()
            )
        };
        if let Err(e) = writeln!(out, "{line}") {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                // `bag cat | head`: the reader stopped, not the recording; loss still counts.
                drop(out);
                return Ok(report_loss(&reader, cursor.issues()));
            }
            return Err(e).context("writing to stdout");
        }
    }
    out.flush().ok();
    Ok(report_loss(&reader, cursor.issues()))
}

pub(super) fn compile(channel: &ChannelInfo) -> Result<Plan, String> {
    let spec = &channel.spec;
    let (encoding, name, data) = match &spec.schema {
        Some(s) => (s.encoding.as_str(), s.name.as_str(), s.data.as_slice()),
        None => ("", "", &[][..]),
    };
    decode::compile(&SchemaSource {
        message_encoding: &spec.message_encoding,
        schema_encoding: encoding,
        schema_name: name,
        schema_data: data,
    })
    .map_err(|e| e.to_string())
}

/// Numbers as JSON numbers; NaN and infinities as the strings `"NaN"`, `"inf"`, `"-inf"`.
fn fields_json(fields: Vec<(String, Scalar)>) -> Value {
    let mut map = Map::new();
    for (path, value) in fields {
        let v = match value {
            Scalar::Int(i) => json!(i),
            Scalar::UInt(u) => json!(u),
            Scalar::Float(f) if f.is_nan() => json!("NaN"),
            Scalar::Float(f) if f.is_infinite() => json!(if f > 0.0 { "inf" } else { "-inf" }),
            Scalar::Float(f) => json!(f),
        };
        map.insert(path, v);
    }
    Value::Object(map)
}
