"""deploy/failover.py: the Streamlit internals it patches are still there; a tab that
reconnects is asked for its whole state once; a request for a fragment the session lacks
runs as the whole page.

The patch at work (a tab whose replica dies redraws on another from its URL and answers
its next input) is tests/e2e/test_deploy.py::test_a_tab_moves_when_its_replica_dies.
"""

from __future__ import annotations

import inspect

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from deploy import failover


def test_the_internals_it_patches_are_there() -> None:
    connect = inspect.signature(WebsocketSessionManager.connect_session).parameters
    assert "existing_session_id" in connect
    assert hasattr(WebsocketSessionManager, "get_active_session_info")
    assert list(inspect.signature(AppSession.request_rerun).parameters) == [
        "self", "client_state",
    ]  # fmt: skip
    assert hasattr(AppSession, "_enqueue_forward_msg")
    # Streamlit itself drops a request for a fragment the session lacks (the check the
    # patch runs before it, with the same call).
    assert "self.has_fragment(fragment_id)" in inspect.getsource(AppSession.request_rerun)
    assert list(inspect.signature(AppSession.has_fragment).parameters) == ["self", "fragment_id"]


def test_install_is_idempotent() -> None:
    failover.install()
    patched = AppSession.request_rerun
    failover.install()
    assert AppSession.request_rerun is patched
    assert AppSession._glassbox_failover is True


def test_a_replica_never_starts_in_the_legacy_pages_mode() -> None:
    """Streamlit decides the mode once, in the first PagesManager it makes, while the flag
    is None: install() (before the server starts) has already made it False, so a tab moved
    onto a replica just started runs through app.py and gets its menu."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = None
    failover.install()
    assert PagesManager.uses_pages_directory is False
    assert "if PagesManager.uses_pages_directory is None:" in inspect.getsource(
        PagesManager.__init__)  # fmt: skip


class Session:
    """What the patched request_rerun uses of an AppSession."""

    def __init__(self) -> None:
        self.sent: list = []

    def has_fragment(self, fragment_id: str) -> bool:
        return fragment_id == "drawn"

    def _enqueue_forward_msg(self, msg) -> None:  # noqa: ANN001
        self.sent.append(msg)


def test_a_fragment_the_session_lacks_runs_the_whole_page_and_the_question_once(
        monkeypatch) -> None:  # fmt: skip
    ran: list[ClientState | None] = []
    monkeypatch.setattr(AppSession, "request_rerun", lambda self, state: ran.append(state))
    monkeypatch.setattr(AppSession, "_glassbox_failover", False, raising=False)
    connect = WebsocketSessionManager.connect_session
    monkeypatch.setattr(WebsocketSessionManager, "connect_session", connect)
    failover.install()
    session = Session()

    def request(fragment_id: str) -> ClientState | None:
        state = ClientState(page_name="attention", fragment_id=fragment_id, is_auto_rerun=True)
        state.widget_states.widgets.add(id="sentence", string_value="A new sentence")
        before = len(ran)
        AppSession.request_rerun(session, state)
        return ran[-1] if len(ran) > before else None

    kept = request("drawn")
    assert kept.fragment_id == "drawn" and kept.is_auto_rerun, "a fragment it holds: as sent"
    whole = request("the other replica's")
    assert whole.fragment_id == "" and not whole.is_auto_rerun
    assert (whole.page_name, whole.widget_states.widgets[0].string_value) == (
        "attention", "A new sentence")  # fmt: skip
    setattr(session, failover.ASKING, True)  # the tab reconnected and was asked
    answer = request(failover.ASK)
    assert answer.fragment_id == "" and not getattr(session, failover.ASKING)
    assert session.sent[-1].stop_auto_rerun.fragment_ids == [failover.ASK]
    assert request(failover.ASK) is None, "a late tick of the question runs nothing"
    assert AppSession.request_rerun(session, None) is None and ran[-1] is None  # a plain rerun
