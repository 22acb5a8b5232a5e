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

`install()` patches Streamlit so that:

- A tab that reconnects (to the session it had, or to a new one on another replica) is
  asked at once for a run with its whole state: the replica sends it an auto-rerun of a
  made-up fragment (ASK), which the browser answers with its page, query string and every
  widget's value; the first answer stops the asking, and it is run as a whole-page run. So
  a tab redraws right after it reconnects, also when it was idle, and a widget change that
  was in flight when the replica died is applied.
- On a session opened for a tab that named a session this replica does not have, the
  first rerun request (the answer, or the tab's own input when it comes first) is first run
  as a plain visit of the tab's URL (its page and query string: the sentence and the model),
  without the widget values, as a fresh tab would be: the page, its fragments and its
  widgets are registered, from the URL. Then, once that run's runner is gone, the request
  itself is run as the browser sent it (every widget's value; the whole page when its
  fragment has another id here): the widgets that differ from a fresh visit (the new
  sentence, an uploaded file, a chosen layer or head) fire their callbacks as on any
  change, and the tab answers its input. A file it uploaded to the replica that died is
  left out (its uploader reads as empty here).

Requests that arrive while that first visit runs wait for it; only the newest is run. A
moved tab's later input in a fragment its session does not hold (yet) runs as the whole
page, where Streamlit would drop it. A tab
that reconnects to the replica that still holds its session (nginx restarted, a network
blip) resumes that session as before, and redraws. What it cannot restore: a click that was
in flight (a page link, a tab), whose request died with the replica; the student clicks
again (the fault test counts these as "actions repeated").

Started by `python -m deploy.replica` (what deploy/serve.py and deploy/k8s run). It reaches
into Streamlit's runtime (AppSession, WebsocketSessionManager), pinned at 1.67 in
requirements.txt; tests/test_deploy_failover.py fails when those internals move.
"""

from __future__ import annotations

ADOPTED = "_glassbox_adopted"  # a session opened for a tab from another replica, not yet run
QUEUED = "_glassbox_queued"  # the request that waits for the URL's visit to finish
MOVED = "_glassbox_moved"  # a session opened for a tab from another replica, for good
ASKING = "_glassbox_asking"  # the tab reconnected and was asked for its state
ASK = "glassbox-failover-ask"  # the made-up fragment id the browser is asked to rerun
ASK_EVERY_S = 0.1  # how soon (and how often, until it answers) the browser is asked


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


def _whole(client_state):
    """`client_state` as a run of the whole page: a fragment's id is its place in the page,
    which the first run of a session on another replica may not share (a page that draws
    something more on a session's first run), and the question's id is no fragment."""
    from streamlit.proto.ClientState_pb2 import ClientState

    whole = ClientState()
    whole.CopyFrom(client_state)
    whole.fragment_id = ""
    whole.is_auto_rerun = False
    return whole


def _without_lost_files(session, client_state):
    """`client_state` without the uploaded files this replica does not hold: a file the tab
    uploaded to the replica that died is gone (its uploader then reads as empty here, not
    as a file that was deleted, which the app's callback cannot read); one uploaded here
    since the tab moved is kept."""
    from streamlit.proto.ClientState_pb2 import ClientState

    kept = ClientState()
    kept.CopyFrom(client_state)
    for widget in kept.widget_states.widgets:
        if widget.WhichOneof("value") != "file_uploader_state_value":
            continue
        infos = widget.file_uploader_state_value.uploaded_file_info
        ids = [info.file_id for info in infos]
        here = {r.file_id for r in session._uploaded_file_mgr.get_files(session.id, ids)}
        for info in [info for info in infos if info.file_id not in here]:
            infos.remove(info)
    return kept


def _ask(every: float | None):
    """The message that asks the browser for a run with its whole state every `every`
    seconds (an auto-rerun of a fragment that does not exist), or (None) stops asking."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    if every is None:
        msg.stop_auto_rerun.fragment_ids.append(ASK)
    else:
        msg.auto_rerun.interval, msg.auto_rerun.fragment_id = every, ASK
    return msg


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

    def connect_session(self, *args, **kwargs):
        session_id = connect(self, *args, **kwargs)
        wanted = kwargs.get("existing_session_id")
        info = self.get_active_session_info(session_id) if wanted else None
        if info is not None:  # a tab that reconnects (to its session, or to a new one here)
            session = info.session
            if session_id != wanted:  # its session lived in another process
                setattr(session, ADOPTED, True)
                setattr(session, MOVED, True)
                log.info("a tab moved here (its session %s is not on this replica)", wanted)
            setattr(session, ASKING, True)
            session._enqueue_forward_msg(_ask(ASK_EVERY_S))
        return session_id

    def request_rerun(self, client_state):
        if client_state is not None and getattr(self, ASKING, False):
            setattr(self, ASKING, False)  # the tab's first request since it reconnected
            self._enqueue_forward_msg(_ask(None))
        elif client_state is not None and client_state.fragment_id == ASK:
            self._enqueue_forward_msg(_ask(None))
            return None  # a late tick of the question, already answered
        if client_state is not None and client_state.fragment_id == ASK:
            client_state = _whole(client_state)  # the tab's state, as the tab holds it now
        if client_state is not None and getattr(self, ADOPTED, False):
            setattr(self, ADOPTED, False)
            setattr(self, QUEUED, client_state)
            return rerun(self, _visit_of(client_state))
        if client_state is not None and getattr(self, QUEUED, None) is not None:
            setattr(self, QUEUED, client_state)  # newer than the queued one, which it replaces
            return None
        if (client_state is not None and getattr(self, MOVED, False) and client_state.fragment_id
                and not self.has_fragment(client_state.fragment_id)):  # fmt: skip
            # A moved tab's input in a fragment this session does not hold (yet): one the
            # visit drew but the run of the tab's whole state, still going, has not drawn
            # again, or one of the other replica's page. Streamlit drops such a request,
            # silently (a lesson tab's sentence typed while that run went on would be lost);
            # it runs here as the whole page, with the tab's every value.
            client_state = _whole(client_state)
        return rerun(self, client_state)

    def handle_event(self, sender, event, *args, **kwargs):
        current = sender is self._scriptrunner
        on_event(self, sender, event, *args, **kwargs)
        # The tab's own request, once the visit's runner is done and gone: it then runs as
        # any request after an idle tab's does, in a runner of its own (a fragment rerun
        # handed to the visit's finishing runner skipped the widgets' callbacks).
        queued = getattr(self, QUEUED, None)
        if current and event == ScriptRunnerEvent.SHUTDOWN and queued is not None:
            setattr(self, QUEUED, None)
            if self._state.name != "SHUTDOWN_REQUESTED":
                queued = _without_lost_files(self, queued)
                rerun(self, queued if self.has_fragment(queued.fragment_id) else _whole(queued))

    WebsocketSessionManager.connect_session = connect_session
    AppSession.request_rerun = request_rerun
    AppSession._handle_scriptrunner_event_on_event_loop = handle_event
    AppSession._glassbox_failover = True
