"""Recordings written by the reference Python writers, for bag/tests/verify_peers.rs.

Writes one MCAP file per configuration of `mcap.writer.Writer` (mcap 1.6 on PyPI) into the folder
argv[1], plus one written by `mcap_ros2.writer.Writer` (mcap-ros2-support), and prints one line per
file: `<file name> <message count>`. Every file has several schemas and channels; the
configurations cover chunked and unchunked, none / lz4 / zstd, with and without attachments,
metadata, statistics, summary offsets, repeated schemas and channels, and each index kind.
"""
import itertools
import json
import os
import sys

from mcap.writer import CompressionType, IndexType, Writer

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)


def fill(writer, attachments, metadata, messages_per_channel):
    """Two JSON schemas, one schemaless channel, three channels; returns the message count."""
    writer.start(profile="", library="python-peer")
    pose = writer.register_schema(
        name="Pose", encoding="jsonschema",
        data=json.dumps({"type": "object", "properties": {"x": {"type": "number"}}}).encode())
    rate = writer.register_schema(
        name="Rate", encoding="jsonschema",
        data=json.dumps({"type": "object", "properties": {"hz": {"type": "integer"}}}).encode())
    channels = [
        writer.register_channel(topic="/pose", message_encoding="json", schema_id=pose),
        writer.register_channel(topic="/rate", message_encoding="json", schema_id=rate,
                                metadata={"unit": "Hz"}),
        writer.register_channel(topic="/raw", message_encoding="", schema_id=0),
    ]
    count = 0
    for i in range(messages_per_channel):
        t = 1_000_000_000 + i * 10_000_000
        writer.add_message(channels[0], log_time=t, publish_time=t, sequence=i,
                           data=json.dumps({"x": i * 0.5}).encode())
        writer.add_message(channels[1], log_time=t + 1, publish_time=t + 1, sequence=i,
                           data=json.dumps({"hz": i}).encode())
        writer.add_message(channels[2], log_time=t + 2, publish_time=t + 2, sequence=i,
                           data=bytes([i % 256]) * 16)
        count += 3
        if attachments and i == messages_per_channel // 2:
            writer.add_attachment(create_time=t, log_time=t, name="calib.txt",
                                  media_type="text/plain", data=b"k1=0.1\n")
        if metadata and i == messages_per_channel // 3:
            writer.add_metadata("run", {"vehicle": "rl-7", "driver": "test"})
    if attachments:
        writer.add_attachment(create_time=0, log_time=2, name="end.bin",
                              media_type="application/octet-stream", data=bytes(range(64)))
    if metadata:
        writer.add_metadata("end", {})
    writer.finish()
    return count


COMPRESSION = {"none": CompressionType.NONE, "lz4": CompressionType.LZ4,
               "zstd": CompressionType.ZSTD}
# full: everything; nooffsets: no SummaryOffset records; nostats: no Statistics; bare: no
# Statistics and no summary copies of schemas and channels.
SUMMARIES = ("full", "nooffsets", "nostats", "bare")
INDEXES = {"all": IndexType.ALL, "noidx": IndexType.NONE,
           "chunkidx": IndexType.CHUNK | IndexType.MESSAGE}

# Every chunked configuration: compression x index kinds x attachments/metadata x summary parts.
configs = []
for comp, idx, extras, summary in itertools.product(
        COMPRESSION, INDEXES, ("plain", "extras"), SUMMARIES):
    configs.append(dict(chunked=True, comp=comp, idx=idx, extras=extras, summary=summary))
# Unchunked: compression does not apply.
for idx, extras, summary in itertools.product(
        INDEXES, ("plain", "extras"), SUMMARIES):
    configs.append(dict(chunked=False, comp="none", idx=idx, extras=extras, summary=summary))

for c in configs:
    name = "{}-{}-{}-{}-{}.mcap".format(
        "chunked" if c["chunked"] else "unchunked", c["comp"], c["idx"], c["extras"], c["summary"])
    repeats = c["summary"] != "bare"
    with open(os.path.join(out_dir, name), "wb") as f:
        writer = Writer(
            f,
            # Small chunks, so every chunked file has several.
            chunk_size=512,
            compression=COMPRESSION[c["comp"]],
            index_types=INDEXES[c["idx"]],
            repeat_channels=repeats,
            repeat_schemas=repeats,
            use_chunking=c["chunked"],
            use_statistics=c["summary"] not in ("bare", "nostats"),
            use_summary_offsets=c["summary"] != "nooffsets",
        )
        n = fill(writer, c["extras"] == "extras", c["extras"] == "extras", 40)
    print(name, n)

# The default options, as most users call it.
with open(os.path.join(out_dir, "default.mcap"), "wb") as f:
    n = fill(Writer(f), False, False, 40)
print("default.mcap", n)
with open(os.path.join(out_dir, "default-extras.mcap"), "wb") as f:
    n = fill(Writer(f), True, True, 40)
print("default-extras.mcap", n)
# Every CRC the writer can write, the data section's included.
with open(os.path.join(out_dir, "default-datacrc.mcap"), "wb") as f:
    n = fill(Writer(f, enable_data_crcs=True), True, True, 40)
print("default-datacrc.mcap", n)

# mcap-ros2-support: ROS 2 CDR messages with ros2msg schemas, profile ros2.
from mcap_ros2.writer import Writer as Ros2Writer  # noqa: E402

with open(os.path.join(out_dir, "ros2.mcap"), "wb") as f:
    writer = Ros2Writer(f)
    imu = writer.register_msgdef("std_msgs/msg/Float64", "float64 data")
    status = writer.register_msgdef("std_msgs/msg/String", "string data")
    n = 0
    for i in range(50):
        t = 1_000_000_000 + i * 1_000_000
        writer.write_message("/speed", imu, {"data": i * 0.25}, log_time=t, publish_time=t,
                             sequence=i)
        writer.write_message("/status", status, {"data": f"ok {i}"}, log_time=t + 1,
                             publish_time=t + 1, sequence=i)
        n += 2
    writer.finish()
print("ros2.mcap", n)
