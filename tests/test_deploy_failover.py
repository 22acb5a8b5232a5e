"""deploy/failover.py: the Streamlit internals it patches are still there, and what it runs
first for a tab that moved replicas is a plain visit of the tab's URL.

The patch at work (a replica killed under a class of browsers, each answering its next
input with its page, sentence and choices kept) is tests/e2e/test_deploy.py's fault test.
"""

from __future__ import annotations

import inspect

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from deploy import failover


def test_the_internals_it_patches_are_there() -> None:
    connect = inspect.signature(WebsocketSessionManager.connect_session).parameters
    assert "existing_session_id" in connect
    assert hasattr(WebsocketSessionManager, "get_active_session_info")
    assert list(inspect.signature(AppSession.request_rerun).parameters) == [
        "self", "client_state",
    ]  # fmt: skip
    handler = inspect.signature(AppSession._handle_scriptrunner_event_on_event_loop)
    assert list(handler.parameters)[:3] == ["self", "sender", "event"]
    assert "SHUTDOWN" in ScriptRunnerEvent.__members__
    assert "SHUTDOWN_REQUESTED" in AppSessionState.__members__
    # The runner is let go at its SHUTDOWN, so the queued request gets a runner of its own.
    handler_source = inspect.getsource(AppSession._handle_scriptrunner_event_on_event_loop)
    assert "self._scriptrunner = None" in handler_source
    # The handler is looked up on the session each time (so the patch reaches it).
    source = inspect.getsource(AppSession._on_scriptrunner_event)
    assert "self._handle_scriptrunner_event_on_event_loop(" in source
    assert "_scriptrunner" in inspect.getsource(AppSession.request_rerun)
    # A moved tab's input in a fragment its session lacks runs as the whole page: Streamlit
    # itself drops such a request (the check the patch runs before it, with the same call).
    assert "self.has_fragment(fragment_id)" in inspect.getsource(AppSession.request_rerun)
    assert list(inspect.signature(AppSession.has_fragment).parameters) == ["self", "fragment_id"]


def test_install_is_idempotent() -> None:
    failover.install()
    patched = AppSession.request_rerun
    failover.install()
    assert AppSession.request_rerun is patched
    assert AppSession._glassbox_failover is True


def test_the_first_run_is_a_visit_of_the_url() -> None:
    state = ClientState(query_string="sentence=A+cat&model=mlm", page_script_hash="abc",
                        page_name="attention", fragment_id="f1", is_auto_rerun=True)  # fmt: skip
    widget = state.widget_states.widgets.add()
    widget.id, widget.string_value = "sentence", "A new sentence"
    visit = failover._visit_of(state)
    assert (visit.query_string, visit.page_script_hash, visit.page_name) == (
        "sentence=A+cat&model=mlm", "abc", "attention",
    )  # fmt: skip
    assert visit.fragment_id == "" and not visit.is_auto_rerun
    assert len(visit.widget_states.widgets) == 0
    assert state.widget_states.widgets[0].string_value == "A new sentence"  # untouched


def test_files_the_replica_does_not_hold_are_left_out() -> None:
    class Files:
        def get_files(self, session_id, file_ids):
            assert session_id == "s1"
            return [type("Rec", (), {"file_id": i})() for i in file_ids if i == "here"]

    session = type("Session", (), {"id": "s1", "_uploaded_file_mgr": Files()})()
    state = ClientState()
    upload = state.widget_states.widgets.add()
    upload.id = "w_upload"
    for file_id in ("gone", "here"):
        info = upload.file_uploader_state_value.uploaded_file_info.add()
        info.file_id, info.name = file_id, f"{file_id}.txt"
    text = state.widget_states.widgets.add()
    text.id, text.string_value = "sentence", "kept"
    kept = failover._without_lost_files(session, state)
    files = kept.widget_states.widgets[0].file_uploader_state_value.uploaded_file_info
    assert [f.file_id for f in files] == ["here"]
    assert kept.widget_states.widgets[1].string_value == "kept"
    assert len(state.widget_states.widgets[0].file_uploader_state_value.uploaded_file_info) == 2
