#!/usr/bin/python3
"""Generates docs/openapi.json (OpenAPI 2.0) from the google.api.http annotations in the protos.

The generator is Debian's protoc-gen-swagger (package golang-grpc-gateway, grpc-gateway 1.6.4).
That plugin predates proto3 `optional`, and protoc refuses to run a plugin that does not declare
support for it, so the descriptor set is first rewritten with those fields as plain fields (their
JSON mapping is the same; presence is not part of an OpenAPI schema). The server-streaming method
is served as server-sent events, which the plugin cannot express: its `produces` is set here.

  generate_openapi.py [--protoc=protoc] [--plugin=/usr/bin/protoc-gen-swagger] OUT.json
  generate_openapi.py --check docs/openapi.json   # exit 1 when the checked-in file is stale
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The API protos that carry google.api.http annotations.
ANNOTATED_PROTOS = ["ibgraphrag/v1/gateway.proto", "ibgraphrag/v1/alignment.proto"]
# HTTP paths served as server-sent events (server-streaming RPCs).
SSE_PATHS = ["/v1/answer:stream"]


def strip_proto3_optional(file_set):
    """Turns proto3 `optional` fields into plain fields and drops their synthetic oneofs."""
    for proto in file_set.file:
        for message in _all_messages(proto.message_type):
            synthetic = set()
            for field in message.field:
                if field.proto3_optional:
                    synthetic.add(field.oneof_index)
                    field.ClearField("proto3_optional")
                    field.ClearField("oneof_index")
            if synthetic:
                # protoc numbers synthetic oneofs after every real one.
                keep = len(message.oneof_decl) - len(synthetic)
                assert min(synthetic) == keep, message.name
                del message.oneof_decl[keep:]


def _all_messages(messages):
    for message in messages:
        yield message
        yield from _all_messages(message.nested_type)


def run_protoc(args, protoc):
    result = subprocess.run([protoc] + args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{protoc} {' '.join(args)}: {result.stderr.strip()}")


def generate(protoc, plugin):
    with tempfile.TemporaryDirectory() as tmp:
        descriptors = os.path.join(tmp, "api.pb")
        run_protoc([f"--proto_path={os.path.join(REPO, 'protos')}", "--include_imports",
                    "--include_source_info", f"--descriptor_set_out={descriptors}"] +
                   ANNOTATED_PROTOS, protoc)
        file_set = descriptor_pb2.FileDescriptorSet()
        with open(descriptors, "rb") as f:
            file_set.ParseFromString(f.read())
        strip_proto3_optional(file_set)
        with open(descriptors, "wb") as f:
            f.write(file_set.SerializeToString())
        run_protoc([f"--descriptor_set_in={descriptors}", f"--plugin=protoc-gen-swagger={plugin}",
                    f"--swagger_out=allow_merge=true,merge_file_name=api:{tmp}"] +
                   ANNOTATED_PROTOS, protoc)
        with open(os.path.join(tmp, "api.swagger.json")) as f:
            document = json.load(f)
    return finish(document)


def finish(document):
    document["info"] = {
        "title": "IBGraphRAG HTTP/JSON API",
        "version": "v1",
        "description": (
            "Generated from the google.api.http annotations in protos/ by "
            "tools/openapi/generate_openapi.py; do not edit. Bodies use the proto3 JSON mapping "
            "with proto field names. Authenticate with `Authorization: Bearer <key>` or "
            "`X-Api-Key: <key>`; errors are {\"code\": \"<gRPC code name>\", \"message\": ...} "
            "with the matching HTTP status. See docs/api.md."),
    }
    for path in SSE_PATHS:
        for operation in document["paths"][path].values():
            operation["produces"] = ["text/event-stream"]
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="OpenAPI JSON file to write (or compare with --check)")
    parser.add_argument("--check", action="store_true",
                        help="compare with OUT instead of writing it; exit 1 when they differ")
    parser.add_argument("--protoc", default="protoc")
    parser.add_argument("--plugin", default="/usr/bin/protoc-gen-swagger")
    args = parser.parse_args()
    if not os.path.exists(args.plugin):
        sys.exit(f"--plugin: {args.plugin} not found (apt-get install golang-grpc-gateway)")
    text = generate(args.protoc, args.plugin)
    if args.check:
        with open(args.out) as f:
            if f.read() != text:
                sys.exit(f"{args.out} is stale: run tools/openapi/generate_openapi.py {args.out}")
        print(f"{args.out}: up to date")
        return
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
