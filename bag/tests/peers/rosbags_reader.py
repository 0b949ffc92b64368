#!/usr/bin/env python3
"""Reads a bag directory with the `rosbags` library (pip install rosbags==0.11.9), as ROS users do.

Usage: rosbags_reader.py BAG_DIR

Opens BAG_DIR by its metadata.yaml (rosbags' rosbag2 reader, which refuses an MCAP part whose
header profile is not `ros2`), reads every message and deserializes it with the types the bag's
own schemas define (rosbags' AnyReader), then opens each part file on its own and counts its
messages. Prints one JSON object on stdout:

  {"ros_distro": ..., "version": ..., "message_count": N, "topics": {topic: count},
   "files": {part: count}, "type_description_hashes": {topic: hash},
   "deserialized": N or null, "deserialize_error": null or what AnyReader said}

Deserializing needs rosbags to parse every schema; where it cannot (it refuses rosbag2's service
event definitions, for one), "deserialized" is null and "deserialize_error" says why: the counts
above still come from reading every message.

Exits 1 with the reader's error on stderr when rosbags cannot read the bag.
"""

import json
import sys
from pathlib import Path

from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.rosbag2 import Reader
from ruamel.yaml import YAML


def main() -> int:
    bag = Path(sys.argv[1])
    topics: dict[str, int] = {}
    with Reader(bag) as reader:
        ros_distro = reader.ros_distro
        message_count = reader.message_count
        hashes = {c.topic: c.digest for c in reader.connections}
        for connection, _timestamp, _rawdata in reader.messages():
            topics[connection.topic] = topics.get(connection.topic, 0) + 1
    metadata = YAML(typ="safe").load((bag / "metadata.yaml").read_text())
    info = metadata["rosbag2_bagfile_information"]
    files: dict[str, int] = {}
    for part in info["relative_file_paths"]:
        with Reader(bag / part) as reader:
            files[part] = sum(1 for _ in reader.messages())
    deserialized = None
    deserialize_error = None
    try:
        with AnyReader([bag]) as reader:
            deserialized = 0
            for connection, _timestamp, rawdata in reader.messages():
                reader.deserialize(rawdata, connection.msgtype)
                deserialized += 1
    except AnyReaderError as error:
        deserialized = None
        deserialize_error = str(error).splitlines()[0]
    json.dump(
        {
            "ros_distro": ros_distro,
            "version": info["version"],
            "message_count": message_count,
            "deserialized": deserialized,
            "deserialize_error": deserialize_error,
            "topics": topics,
            "files": files,
            "type_description_hashes": hashes,
        },
        sys.stdout,
        sort_keys=True,
    )
    print()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # noqa: BLE001 - the caller shows what rosbags said
        print(f"rosbags could not read {sys.argv[1]}: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
