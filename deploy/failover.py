"""A browser tab that moves to another replica keeps its page, its sentence and its choices.

Streamlit keeps a tab's state in the process that holds its websocket. When that replica
dies, the browser reconnects by itself (no reload) and nginx sends it to a live replica,
which has never seen the tab: it opens a new, empty session. Two things then go wrong in
streamlit 1.67 (measured, tests/e2e/test_deploy.py::test_a_class_through_faults):

1. The browser does not ask for a run on reconnecting when it was idle: it still shows the
   old page, as if the same session had resumed.
2. Its next input is lost. A widget inside a fragment (a page's body, its sidebar box)
   asks for a rerun of that fragment, which the new session does not have: the request is
   dropped, silently, and the tab never answers. A widget outside one asks for a full run
   with its new value, but the new session has no record of the widget, so its `on_change`
   callback does not fire and the app's state (the URL's sentence) wins over the new value.

`install()` patches the new session on the replica the tab moved to, before the app's
first run. The first rerun request of a session opened for a tab that named a session this
replica does not have:

- is first run as a plain visit of the tab's URL (its page and query string: the sentence
  and the model), without the widget values, as a fresh tab would be: the page, its
  fragments and its widgets are registered, from the URL;
- then the request itself is run as the browser sent it (the fragment, every widget's
  value): the widgets that differ from a fresh visit (the new sentence, a chosen layer or
  head) fire their callbacks as on any change, and the tab answers its input.

Requests that arrive while that first visit runs wait for it; only the newest is run.
Nothing else changes: a tab that reconnects to the replica that still holds its session
(nginx restarted, a network blip) resumes that session as before.

Started by `python -m deploy.replica` (what deploy/serve.py and deploy/k8s run). It reaches
into Streamlit's runtime (AppSession, WebsocketSessionManager), pinned at 1.67 in
requirements.txt; tests/test_deploy_failover.py fails when those internals move.
"""

from __future__ import annotations

ADOPTED = "_glassbox_adopted"  # a session opened for a tab from another replica, not yet run
QUEUED = "_glassbox_queued"  # the request that waits for the URL's visit to finish


def _visit_of(client_state):
    """The same page and query string as `client_state`, without widget values: what a
    fresh tab on the tab's URL sends."""
    from streamlit.proto.ClientState_pb2 import ClientState

    visit = ClientState()
    visit.CopyFrom(client_state)
    visit.ClearField("widget_states")
    visit.fragment_id = ""
    visit.is_auto_rerun = False
    return visit


def install() -> None:
    """Patch Streamlit's session manager and AppSession (idempotent)."""
    from streamlit.logger import get_logger
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.scriptrunner import ScriptRunnerEvent
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    if getattr(AppSession, "_glassbox_failover", False):
        return
    log = get_logger(__name__)
    connect = WebsocketSessionManager.connect_session
    rerun = AppSession.request_rerun
    on_event = AppSession._handle_scriptrunner_event_on_event_loop
    finished = {
        ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS,
        ScriptRunnerEvent.SCRIPT_STOPPED_WITH_COMPILE_ERROR,
    }

    def connect_session(self, *args, **kwargs):
        session_id = connect(self, *args, **kwargs)
        wanted = kwargs.get("existing_session_id")
        if wanted and session_id != wanted:  # the tab's session lived in another process
            info = self.get_active_session_info(session_id)
            if info is not None:
                setattr(info.session, ADOPTED, True)
                log.info("a tab moved here (its session %s is not on this replica)", wanted)
        return session_id

    def request_rerun(self, client_state):
        if client_state is not None and getattr(self, ADOPTED, False):
            setattr(self, ADOPTED, False)
            setattr(self, QUEUED, client_state)
            return rerun(self, _visit_of(client_state))
        if client_state is not None and getattr(self, QUEUED, None) is not None:
            setattr(self, QUEUED, client_state)  # newer than the queued one, which it replaces
            return None
        return rerun(self, client_state)

    def handle_event(self, sender, event, *args, **kwargs):
        current = sender is self._scriptrunner
        on_event(self, sender, event, *args, **kwargs)
        if current and event in finished and getattr(self, QUEUED, None) is not None:
            queued = getattr(self, QUEUED)
            setattr(self, QUEUED, None)
            rerun(self, queued)  # the tab's own request, now that its page is registered

    WebsocketSessionManager.connect_session = connect_session
    AppSession.request_rerun = request_rerun
    AppSession._handle_scriptrunner_event_on_event_loop = handle_event
    AppSession._glassbox_failover = True
