"""IBGraphRAG Python client: `answer(question, options=..., task=...)` over gRPC, TLS, API key.

Needs only Debian's python3-grpcio and python3-protobuf; put clients/python on sys.path (or
PYTHONPATH) and `import ibgraphrag_client`. See client.py and examples/ask.py.
"""
from ibgraphrag_client.client import (AnswerError, AnswerResponse, AnswerStreamResponse, Client,
                                      PipelineOptions, answer)

__all__ = ["AnswerError", "AnswerResponse", "AnswerStreamResponse", "Client", "PipelineOptions",
           "answer"]
