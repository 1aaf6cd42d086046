#!/usr/bin/python3
"""Asks the IBGraphRAG gateway one question and prints the answer and its evidence.

    clients/python/examples/ask.py --target=localhost:50051 \
        "Which drug treats type 2 diabetes mellitus?" --option=Metformin --option=Polyuria
    # TLS and a key: --ca=ca.pem [--server_name=gateway] and IBGR_API_KEY in the environment
    # --json prints the whole AnswerResponse (proto3 JSON mapping).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from google.protobuf import json_format  # noqa: E402

from ibgraphrag_client import AnswerError, Client  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question")
    parser.add_argument("--option", action="append", default=[], help="a multiple-choice option")
    parser.add_argument("--task", default=None,
                        help="multiple_choice, fact_verification or open (default: from options)")
    parser.add_argument("--target", default="localhost:50051")
    parser.add_argument("--ca", default=None, help="PEM CA of the server certificate (TLS)")
    parser.add_argument("--server_name", default=None, help="name on the server certificate")
    parser.add_argument("--timeout", type=float, default=30.0, help="deadline in seconds")
    parser.add_argument("--json", action="store_true", help="print the AnswerResponse as JSON")
    args = parser.parse_args()

    client = Client(args.target, api_key=os.environ.get("IBGR_API_KEY"), ca_cert=args.ca,
                    server_name=args.server_name, timeout=args.timeout)
    try:
        response = client.answer(args.question, options=args.option, task=args.task)
    except AnswerError as e:
        print(e, file=sys.stderr)
        return 2
    finally:
        client.close()
    if args.json:
        print(json_format.MessageToJson(response, preserving_proto_field_name=True))
        return 0
    print(response.answer.text)
    for triple in response.evidence:
        print(f"  {triple.head.name} --{triple.relation}--> {triple.tail.name}")
    for d in response.degraded:
        print(f"  degraded: {d.component}: {d.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
