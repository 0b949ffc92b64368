//! The one way a topic's messages become columns: compile the topic's decoding plan from the
//! schema its summary carries.

use decode::{Plan, SchemaSource, compile};

use crate::data::source::TopicInfo;
use crate::error::Error;

/// Compiles the decoding plan of `info`'s schema.
pub fn compile_plan(info: &TopicInfo) -> Result<Plan, Error> {
    compile(&SchemaSource {
        message_encoding: &info.message_encoding,
        schema_encoding: &info.schema_encoding,
        schema_name: &info.schema_name,
        schema_data: &info.schema_data,
    })
    .map_err(|source| Error::Schema {
        type_name: info.type_name.clone(),
        source,
    })
}
