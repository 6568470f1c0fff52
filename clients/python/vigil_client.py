"""Vigil from Python: ``check`` before a tool call, batched ``report`` of what happened, and
``guard_tool`` to do both around a function. Standard library only (Python >= 3.9).

Fails open by default: when Vigil cannot be reached a call is allowed and events wait for the next
flush; ``fail_open=False`` refuses instead (``VigilUnreachable``).

    vigil = Vigil(agent="billing-bot")            # VIGIL_URL, VIGIL_API_KEY
    @vigil.guard_tool("http_request")
    def fetch(url): ...
    try:
        fetch(url="https://api.example.com/v1/users")
    except VigilDecision as e:
        print(e.decision, e)                      # Vigil's reason, for the model
    vigil.close()
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional

__all__ = ["Vigil", "VigilDecision", "VigilApiError", "VigilUnreachable"]
__version__ = "0.1.0"


class VigilApiError(Exception):
    """Vigil refused a request (4xx, or 5xx/429 after the retries)."""

    def __init__(self, procedure: str, status: int, message: str, code: Optional[str] = None):
        text = "401: the API key was not accepted (VIGIL_API_KEY)" if status == 401 else f"{status}: {message}"
        super().__init__(text)
        self.procedure, self.status, self.code = procedure, status, code


class VigilUnreachable(Exception):
    """Vigil could not be reached at ``url``."""

    def __init__(self, url: str, cause: BaseException):
        super().__init__(f"Vigil could not be reached at {url}: {cause}")
        self.url, self.cause = url, cause


class VigilDecision(Exception):
    """A call Vigil did not let run (deny, pause, or an ask no one approved). ``str(e)`` is Vigil's reason."""

    def __init__(self, answer: Dict[str, Any]):
        self.answer = answer
        self.decision = answer.get("decision")
        super().__init__(answer.get("reason") or f"Vigil answered {self.decision} for {answer.get('failureKey') or 'this call'}.")


def _cannot_reach(error: BaseException) -> bool:
    return isinstance(error, VigilUnreachable) or (isinstance(error, VigilApiError) and (error.status >= 500 or error.status == 429))


def _stable_id(kind: str, *parts: str) -> str:
    return kind + "_" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:43]


def _json_object(value: Any) -> Dict[str, Any]:
    try:
        plain = json.loads(json.dumps(value if value is not None else {}, default=str))
    except (TypeError, ValueError):
        plain = {"input": str(value)}
    return plain if isinstance(plain, dict) else {"input": plain}


class Vigil:
    def __init__(
        self,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        agent: Optional[str] = None,
        session_id: Optional[str] = None,
        fail_open: bool = True,
        wait_for_approval_seconds: float = 0,
        batch_size: int = 100,
        flush_interval: float = 1.0,
        max_queue: int = 10_000,
        timeout: float = 10.0,
        max_retries: int = 3,
        on_error: Optional[Callable[[BaseException], None]] = None,
    ):
        self.url = (url or os.environ.get("VIGIL_URL") or "").rstrip("/")
        self.api_key = api_key or os.environ.get("VIGIL_API_KEY") or ""
        if not self.url:
            raise ValueError("Vigil: url is required (or set VIGIL_URL)")
        if not self.api_key:
            raise ValueError("Vigil: api_key is required (or set VIGIL_API_KEY)")
        self.agent = agent
        self.session_id = session_id or f"vigil-{uuid.uuid4()}"
        self.fail_open = fail_open
        self.wait_for_approval_seconds = wait_for_approval_seconds
        self.batch_size = max(1, min(batch_size, 1000))
        self.flush_interval = flush_interval
        self.max_queue = max_queue
        self.timeout = timeout
        self.max_retries = max_retries
        self.on_error = on_error or (lambda e: print(f"vigil: {e}", file=sys.stderr))
        self.effects: List[Dict[str, Any]] = []
        self._queue: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._started_sessions: set = set()
        self._paused: Dict[str, str] = {}
        self._nudges: Dict[str, List[Dict[str, Any]]] = {}
        # The background sender: every flush_interval, or sooner once batch_size events wait.
        self._thread = threading.Thread(target=self._run, name="vigil-reporter", daemon=True)
        self._thread.start()

    # -- the agent API --------------------------------------------------------------------------

    def check(self, tool_name: str, args: Optional[Dict[str, Any]] = None, call_id: Optional[str] = None, session_id: Optional[str] = None,
              model: Optional[str] = None, wait_for_approval_seconds: Optional[float] = None) -> Dict[str, Any]:
        """guard.check: ``{decision, failureKey, state, reason, approvalId, effects, ...}``. Queued reports are sent first."""
        session_id = session_id or self.session_id
        call_id = call_id or str(uuid.uuid4())
        self._ensure_session(session_id)
        try:
            self.flush()
        except Exception:  # fail-open: the events stay queued
            pass
        wait = self.wait_for_approval_seconds if wait_for_approval_seconds is None else wait_for_approval_seconds
        body: Dict[str, Any] = {"id": _stable_id("check", session_id, call_id), "sessionId": session_id, "callId": call_id, "toolName": tool_name, "args": _json_object(args)}
        if model:
            body["model"] = model
        if wait > 0:
            body["waitForApprovalSeconds"] = wait
        try:
            answer = self._call("guard.check", body, extra_timeout=wait)
        except Exception as error:
            if self.fail_open and _cannot_reach(error):
                self.on_error(error)
                return {"decision": "allow", "failureKey": "", "state": "trusted", "reason": None, "approvalId": None, "effects": [], "failedOpen": str(error), "callId": call_id, "sessionId": session_id}
            raise
        answer = dict(answer, callId=call_id, sessionId=session_id)
        if answer.get("decision") == "pause":
            self._paused[session_id] = answer.get("reason") or "paused"
        else:
            self._paused.pop(session_id, None)
        self._dispatch(answer.get("effects") or [])
        return answer

    def report(self, event: Dict[str, Any]) -> None:
        """Queues an event for ingest.events (``id``, ``sessionId`` and ``ts`` filled in); sent by the background thread."""
        session_id = event.get("sessionId") or self.session_id
        if event.get("type") != "session.start":
            self._ensure_session(session_id)
        full = dict(event, sessionId=session_id)
        full.setdefault("id", str(uuid.uuid4()))
        full.setdefault("ts", datetime.now(timezone.utc).isoformat())
        with self._lock:
            self._queue.append(full)
            if len(self._queue) > self.max_queue:
                del self._queue[: len(self._queue) - self.max_queue]
            if len(self._queue) >= self.batch_size:
                self._wake.set()

    def flush(self) -> Dict[str, Any]:
        """Sends every queued event now. Fail-open: when Vigil cannot be reached they stay queued."""
        total: Dict[str, Any] = {"accepted": 0, "duplicates": 0, "effects": []}
        with self._send_lock:
            while True:
                with self._lock:
                    batch = self._queue[: self.batch_size]
                    del self._queue[: len(batch)]
                if not batch:
                    return total
                try:
                    answer = self._call("ingest.events", {"events": batch})
                except Exception as error:
                    if _cannot_reach(error):
                        with self._lock:
                            self._queue[:0] = batch  # kept for the next flush
                        if self.fail_open:
                            self.on_error(error)
                            return total
                    else:
                        self.on_error(error)  # a refused batch would be refused again: dropped, and said so
                    raise
                total["accepted"] += answer.get("accepted", 0)
                total["duplicates"] += answer.get("duplicates", 0)
                total["effects"].extend(answer.get("effects") or [])
                self._dispatch(answer.get("effects") or [])

    def close(self) -> None:
        """Stops the background thread and sends what is queued."""
        self._stopped.set()
        self._wake.set()
        self._thread.join(timeout=self.timeout)
        self.flush()

    def start_session(self, session_id: Optional[str] = None, agent: Optional[str] = None, model: Optional[str] = None) -> str:
        session_id = session_id or self.session_id
        self._started_sessions.add(session_id)
        event: Dict[str, Any] = {"type": "session.start", "sessionId": session_id}
        if agent or self.agent:
            event["agent"] = agent or self.agent
        if model:
            event["model"] = model
        self.report(event)
        return session_id

    def end_session(self, session_id: Optional[str] = None) -> None:
        self.report({"type": "session.end", "sessionId": session_id or self.session_id})
        self.flush()

    def report_tool_result(self, tool_name: str, call_id: str, args: Any = None, result: Any = None, error: Optional[BaseException] = None,
                           session_id: Optional[str] = None, duration_ms: Optional[int] = None) -> None:
        event: Dict[str, Any] = {"type": "tool.result", "sessionId": session_id or self.session_id, "callId": call_id, "toolName": tool_name}
        if args is not None:
            event["args"] = _json_object(args)
        if duration_ms is not None:
            event["durationMs"] = duration_ms
        if error is not None:
            event.update(success=False, error=str(error) or type(error).__name__)
            status = getattr(error, "status", None) or getattr(error, "status_code", None) or getattr(error, "code", None)
            if isinstance(status, int) and 100 <= status <= 599:
                event["httpStatus"] = status
        else:
            event["success"] = True
            if result is not None:
                text = json.dumps(result, default=str)
                event["result"] = json.loads(text) if len(text) <= 16_384 else text[:16_384] + "…"
        self.report(event)

    def guard_tool(self, name: str, on_ask: Optional[Callable[[Dict[str, Any]], bool]] = None, wait_for_approval_seconds: Optional[float] = None):
        """Decorator: check → run → report the result or the raised error. ``deny``/``pause`` raise VigilDecision without
        running; so does ``ask`` unless ``on_ask(answer)`` returns True. Keyword arguments are the tool's args; pass
        ``vigil_session_id`` / ``vigil_call_id`` to choose the session or call id."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fn)
            def guarded(*args: Any, vigil_session_id: Optional[str] = None, vigil_call_id: Optional[str] = None, **kwargs: Any) -> Any:
                session_id = vigil_session_id or self.session_id
                call_id = vigil_call_id or str(uuid.uuid4())
                call_args = dict(kwargs) if kwargs or not args else {"args": list(args)}
                answer = self.check(name, call_args, call_id=call_id, session_id=session_id, wait_for_approval_seconds=wait_for_approval_seconds)
                decision = answer.get("decision")
                if decision == "ask":
                    granted = bool(on_ask(answer)) if on_ask else False
                    if on_ask:
                        self.report({"type": "permission.resolved", "sessionId": session_id, "callId": call_id, "toolName": name, "granted": granted, "method": "python"})
                    if not granted:
                        raise VigilDecision(answer)
                elif decision != "allow":
                    raise VigilDecision(answer)
                started = time.monotonic()
                try:
                    result = fn(*args, **kwargs)
                except Exception as error:
                    self.report_tool_result(name, call_id, call_args, error=error, session_id=session_id, duration_ms=int((time.monotonic() - started) * 1000))
                    raise
                self.report_tool_result(name, call_id, call_args, result=result, session_id=session_id, duration_ms=int((time.monotonic() - started) * 1000))
                return result

            return guarded

        return decorate

    def paused_reason(self, session_id: Optional[str] = None) -> Optional[str]:
        return self._paused.get(session_id or self.session_id)

    def take_nudges(self, session_id: Optional[str] = None) -> List[Dict[str, Any]]:
        """The nudges Vigil sent for the session since last taken (add their ``message`` to the next model call)."""
        return self._nudges.pop(session_id or self.session_id, [])

    # -- internals ------------------------------------------------------------------------------

    def _ensure_session(self, session_id: str) -> None:
        if session_id not in self._started_sessions:
            self.start_session(session_id)

    def _dispatch(self, effects: List[Dict[str, Any]]) -> None:
        for effect in effects:
            self.effects.append(effect)
            if effect.get("type") == "paused":
                self._paused[effect["sessionId"]] = effect.get("reason") or "paused"
            elif effect.get("type") == "nudge":
                self._nudges.setdefault(effect["sessionId"], []).append(effect)

    def _run(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait(self.flush_interval)
            self._wake.clear()
            if self._stopped.is_set():
                return
            try:
                self.flush()
            except Exception:
                pass  # said through on_error; the events wait for the next round

    def _call(self, procedure: str, body: Dict[str, Any], extra_timeout: float = 0) -> Any:
        url = f"{self.url}/api/trpc/{procedure}"
        data = json.dumps(body).encode()
        for attempt in range(self.max_retries + 1):
            request = urllib.request.Request(url, data=data, method="POST", headers={
                "authorization": f"Bearer {self.api_key}", "content-type": "application/json", "user-agent": f"vigil-python/{__version__}"})
            try:
                with urllib.request.urlopen(request, timeout=self.timeout + extra_timeout) as response:
                    return json.loads(response.read() or b"{}").get("result", {}).get("data")
            except urllib.error.HTTPError as error:
                if error.code in (429, 503) and attempt < self.max_retries:
                    time.sleep(_retry_delay(error.headers.get("retry-after"), attempt))
                    continue
                message, code = error.reason, None
                try:
                    payload = json.loads(error.read() or b"{}").get("error", {})
                    message = payload.get("message") or message
                    code = (payload.get("data") or {}).get("code")
                except ValueError:
                    pass
                raise VigilApiError(procedure, error.code, str(message), code) from None
            except (urllib.error.URLError, OSError) as error:
                raise VigilUnreachable(self.url, error) from None
        raise AssertionError("unreachable")


def _retry_delay(retry_after: Optional[str], attempt: int) -> float:
    try:
        if retry_after is not None:
            return min(max(float(retry_after), 0.0), 30.0)
    except ValueError:
        pass
    return min(0.25 * (2 ** attempt), 30.0)
