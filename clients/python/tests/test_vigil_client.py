"""vigil_client against a real Vigil: VIGIL_URL and VIGIL_API_KEY (an admin key of a fresh workspace)
come from tests/integration/python-client.test.ts, which starts the app and runs this file."""

import os
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vigil_client import Vigil, VigilApiError, VigilDecision, VigilUnreachable  # noqa: E402

URL_V1 = "https://api.example.com/v1/users"
KEY_V1 = "http_request|domain=api.example.com|path_prefix=v1"
PREFIX = os.environ.get("VIGIL_TEST_SESSION_PREFIX", "py")

pytestmark = pytest.mark.skipif(not os.environ.get("VIGIL_URL"), reason="needs VIGIL_URL and VIGIL_API_KEY of a running Vigil")


class HttpError(Exception):
    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def client(name, **options):
    return Vigil(agent="py-agent", session_id=f"{PREFIX}-{name}", **options)


def test_guard_tool_reports_failures_then_the_escalated_key_asks():
    vigil = client("escalate")
    runs = []

    @vigil.guard_tool("http_request")
    def fetch(url):
        runs.append(url)
        raise HttpError("Service Unavailable", 503)

    for _ in range(3):
        with pytest.raises(HttpError):
            fetch(url=URL_V1)
    with pytest.raises(VigilDecision) as refused:
        fetch(url=URL_V1)
    assert refused.value.decision == "ask"
    assert "3 failures" in str(refused.value)
    assert refused.value.answer["failureKey"] == KEY_V1
    assert len(runs) == 3

    # Another run of the agent (its own session, so no loop of this one): on_ask grants the call.
    @vigil.guard_tool("http_request", on_ask=lambda answer: answer["state"] == "escalated")
    def fetch_ok(url):
        return {"users": 2}

    assert fetch_ok(url=URL_V1, vigil_session_id=f"{PREFIX}-escalate-second") == {"users": 2}
    vigil.close()


def test_reports_are_sent_by_the_background_thread_and_effects_arrive():
    vigil = client("background", flush_interval=0.2)
    # Three empty model answers in a row pause the session.
    for _ in range(3):
        vigil.report({"type": "model.text", "text": ""})
    deadline = time.time() + 10
    while vigil.paused_reason() is None and time.time() < deadline:
        time.sleep(0.05)
    assert vigil.paused_reason()
    ran = []

    @vigil.guard_tool("bash")
    def shell(command):
        ran.append(command)

    with pytest.raises(VigilDecision) as paused:
        shell(command="ls")
    assert paused.value.decision == "pause"
    assert ran == []
    vigil.close()


def test_fails_open_when_vigil_cannot_be_reached_and_refuses_with_fail_open_false():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    away = f"http://127.0.0.1:{port}"
    errors = []
    open_client = Vigil(url=away, api_key="vgl_unused", on_error=errors.append)
    answer = open_client.check("bash", {"command": "ls"})
    assert answer["decision"] == "allow"
    assert away in answer["failedOpen"]
    assert open_client.guard_tool("bash")(lambda command: "listed")(command="ls") == "listed"
    assert errors

    strict = Vigil(url=away, api_key="vgl_unused", fail_open=False, on_error=lambda e: None)
    ran = []
    with pytest.raises(VigilUnreachable):
        strict.guard_tool("bash")(lambda command: ran.append(command))(command="ls")
    assert ran == []

    wrong_key = Vigil(api_key="vgl_not_a_key")
    with pytest.raises(VigilApiError) as refused:
        wrong_key.check("bash", {"command": "ls"})
    assert str(refused.value) == "401: the API key was not accepted (VIGIL_API_KEY)"
