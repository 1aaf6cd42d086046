"""The Python client against a running all-in-one server (started by python_client_test.cc, which
passes its address, CA and API key in IBGR_TEST_* variables)."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import grpc  # noqa: E402

import ibgraphrag_client  # noqa: E402
from ibgraphrag_client import AnswerError, Client, PipelineOptions, answer  # noqa: E402

QUESTION = "Which drug treats type 2 diabetes mellitus?"


def _env(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run through ctest (python_client_test)")
    return value


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.target = _env("IBGR_TEST_TARGET")
        cls.ca = _env("IBGR_TEST_CA")
        cls.key = _env("IBGR_TEST_API_KEY")

    def client(self, key=None):
        return Client(self.target, api_key=key or self.key, ca_cert=self.ca,
                      server_name="localhost", timeout=30)

    def test_answer_over_tls_with_key_returns_typed_response_with_evidence(self):
        response = answer(QUESTION, options=["Metformin", "Polyuria"], task="multiple_choice",
                          target=self.target, api_key=self.key, ca_cert=self.ca,
                          server_name="localhost", request_id="py-rid-1")
        self.assertIsInstance(response, ibgraphrag_client.AnswerResponse)
        self.assertTrue(response.answer.text)
        self.assertIn(("Metformin", "type 2 diabetes mellitus"),
                      [(t.head.name, t.tail.name) for t in response.evidence])
        self.assertEqual(response.request_id, "py-rid-1")

    def test_pipeline_options_pass_through(self):
        with self.client() as c:
            response = c.answer(QUESTION, pipeline=PipelineOptions(top_k=1))
        self.assertLessEqual(len(response.evidence), 1)

    def test_stream_yields_stages_then_the_result(self):
        with self.client() as c:
            events = list(c.answer_stream(QUESTION, options=["Metformin", "Polyuria"]))
        stages = [e.stage.stage for e in events if e.HasField("stage")]
        self.assertTrue({"align", "retrieve", "reason"} <= set(stages), stages)
        self.assertTrue(events[-1].HasField("result"))

    def test_wrong_key_raises_unauthenticated_with_request_id(self):
        with self.client(key="wrong-key") as c, self.assertRaises(AnswerError) as caught:
            c.answer(QUESTION)
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAUTHENTICATED)
        self.assertEqual(len(caught.exception.request_id), 32)

    def test_invalid_request_names_the_field(self):
        with self.client() as c, self.assertRaises(AnswerError) as caught:
            c.answer("")
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("question", caught.exception.message)

    def test_bad_arguments_are_refused_before_any_call(self):
        with self.assertRaisesRegex(ValueError, "task"):
            answer(QUESTION, task="essay", target=self.target, api_key=self.key, ca_cert=self.ca)
        with self.assertRaisesRegex(ValueError, "no TLS"):
            Client("gateway.example:50051", api_key="k")
        with self.assertRaisesRegex(ValueError, "together"):
            Client(self.target, client_cert="c.pem")

    def test_example_script_prints_the_answer_as_json(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                              "ask.py")
        out = subprocess.run(
            [sys.executable, script, QUESTION, "--option=Metformin", "--option=Polyuria",
             f"--target={self.target}", f"--ca={self.ca}", "--server_name=localhost", "--json"],
            env=dict(os.environ, IBGR_API_KEY=self.key), capture_output=True, text=True,
            timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(json.loads(out.stdout)["answer"]["text"])


if __name__ == "__main__":
    unittest.main()
