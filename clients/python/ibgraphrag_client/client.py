"""A typed Python client of the IBGraphRAG gateway (gRPC), over TLS with an API key.

    from ibgraphrag_client import Client

    with Client("localhost:50051", api_key=os.environ["IBGR_API_KEY"], ca_cert="ca.pem") as c:
        response = c.answer("Which drug treats type 2 diabetes mellitus?",
                            options=["Metformin", "Polyuria"])
        print(response.answer.text, [t.head.name for t in response.evidence])

Responses are the generated `ibgraphrag.v1` messages (gateway_pb2.AnswerResponse, ...). Failed
calls raise AnswerError with the gRPC code, the server's message and the request id.
"""
from __future__ import annotations

import os
import sys
from typing import Iterable, Iterator, Optional, Sequence, Union

import grpc

# The generated modules import each other as top-level `ibgraphrag.v1` and `google.api` (protoc's
# Python output has no package prefix option); `google` is a namespace package in Debian's
# python3-protobuf, so google.api joins it.
_GENERATED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_generated")
if _GENERATED not in sys.path:
    sys.path.insert(0, _GENERATED)

from ibgraphrag.v1 import common_pb2  # noqa: E402
from ibgraphrag.v1 import gateway_pb2  # noqa: E402
from ibgraphrag.v1 import gateway_pb2_grpc  # noqa: E402

AnswerResponse = gateway_pb2.AnswerResponse
AnswerStreamResponse = gateway_pb2.AnswerStreamResponse
PipelineOptions = gateway_pb2.PipelineOptions

# task= accepts the enum value or its name, with or without the TASK_ prefix ("multiple_choice").
TaskLike = Union[int, str, None]


class AnswerError(Exception):
    """A failed call: `code` is a grpc.StatusCode, `message` the server's explanation."""

    def __init__(self, code: grpc.StatusCode, message: str, request_id: str = ""):
        super().__init__(f"{code.name}: {message}" + (f" (request {request_id})" if request_id
                                                      else ""))
        self.code = code
        self.message = message
        self.request_id = request_id


def _task_value(task: TaskLike) -> int:
    if task is None:
        return common_pb2.TASK_UNSPECIFIED
    if isinstance(task, int):
        return task
    name = task.upper()
    if not name.startswith("TASK_"):
        name = "TASK_" + name
    try:
        return common_pb2.Task.Value(name)
    except ValueError:
        raise ValueError(f"task: unknown task {task!r}; one of "
                         f"{', '.join(common_pb2.Task.keys())}") from None


def _read_file(path: Optional[str]) -> Optional[bytes]:
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


class Client:
    """A channel to the gateway (or the all-in-one server) and the Answer calls on it."""

    def __init__(self, target: str = "localhost:50051", *, api_key: Optional[str] = None,
                 tls: Optional[bool] = None, ca_cert: Optional[str] = None,
                 client_cert: Optional[str] = None, client_key: Optional[str] = None,
                 server_name: Optional[str] = None, timeout: float = 30.0):
        """target: host:port. api_key: sent as `authorization: Bearer <key>`.
        tls: defaults to True when any certificate is given; ca_cert: PEM file of the server's CA
        (None with tls=True: the system roots). client_cert/client_key: PEM files for mTLS.
        server_name: the name checked against the server certificate instead of the host.
        timeout: default deadline of a call, in seconds."""
        if (client_cert is None) != (client_key is None):
            raise ValueError("client_cert and client_key go together")
        if tls is None:
            tls = ca_cert is not None or client_cert is not None
            if not tls and api_key is not None and not _is_loopback(target):
                raise ValueError(f"api_key: no TLS to {target}; give ca_cert= or tls=True (system "
                                 "roots), or tls=False to send the key in the clear")
        options = []
        if server_name:
            options.append(("grpc.ssl_target_name_override", server_name))
        if tls:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read_file(ca_cert), private_key=_read_file(client_key),
                certificate_chain=_read_file(client_cert))
            self._channel = grpc.secure_channel(target, credentials, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self._stub = gateway_pb2_grpc.GatewayServiceStub(self._channel)
        self._api_key = api_key
        self._timeout = timeout

    def answer(self, question: str, options: Sequence[str] = (), task: TaskLike = None, *,
               pipeline: Optional[PipelineOptions] = None, timeout: Optional[float] = None,
               request_id: Optional[str] = None) -> AnswerResponse:
        """Answers `question` (with multiple-choice `options`, if any) with evidence."""
        request = self._request(question, options, task, pipeline)
        try:
            return self._stub.Answer(request, timeout=timeout or self._timeout,
                                     metadata=self._metadata(request_id))
        except grpc.RpcError as e:
            raise _error(e) from None

    def answer_stream(self, question: str, options: Sequence[str] = (), task: TaskLike = None, *,
                      pipeline: Optional[PipelineOptions] = None,
                      timeout: Optional[float] = None,
                      request_id: Optional[str] = None) -> Iterator[AnswerStreamResponse]:
        """Yields a stage event after each stage, LLM tokens, then the result (always last)."""
        request = gateway_pb2.AnswerStreamRequest(
            request=self._request(question, options, task, pipeline))
        try:
            yield from self._stub.AnswerStream(request, timeout=timeout or self._timeout,
                                               metadata=self._metadata(request_id))
        except grpc.RpcError as e:
            raise _error(e) from None

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def _request(question: str, options: Iterable[str], task: TaskLike,
                 pipeline: Optional[PipelineOptions]) -> gateway_pb2.AnswerRequest:
        request = gateway_pb2.AnswerRequest(question=question, options=list(options),
                                            task=_task_value(task))
        if pipeline is not None:
            request.pipeline.CopyFrom(pipeline)
        return request

    def _metadata(self, request_id: Optional[str]):
        metadata = []
        if self._api_key is not None:
            metadata.append(("authorization", "Bearer " + self._api_key))
        if request_id is not None:
            metadata.append(("x-request-id", request_id))
        return metadata


def answer(question: str, options: Sequence[str] = (), task: TaskLike = None, *,
           target: str = "localhost:50051", **client_args) -> AnswerResponse:
    """One call on a one-off Client(target, **client_args); see Client.answer."""
    call_args = {k: client_args.pop(k) for k in ("pipeline", "request_id") if k in client_args}
    with Client(target, **client_args) as client:
        return client.answer(question, options, task, **call_args)


def _is_loopback(target: str) -> bool:
    host = target.rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "127.0.0.1", "::1") or target.startswith("unix:")


def _error(e: grpc.RpcError) -> AnswerError:
    request_id = ""
    for key, value in (e.trailing_metadata() or ()) + (e.initial_metadata() or ()):
        if key == "x-request-id":
            request_id = value
    return AnswerError(e.code(), e.details() or "", request_id)
