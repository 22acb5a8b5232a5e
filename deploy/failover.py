"""A tab that moves to another replica redraws at once and answers its next input.

Its state is its URL and its widgets' values, which the browser holds (ui/state.py). On a
reconnect Streamlit 1.67 neither redraws an idle tab nor runs an input in a fragment the new
session lacks (it drops it): so the tab is asked for a run with its whole state (an
auto-rerun of a made-up fragment, ASK), and such an input runs as the whole page. A replica
never starts in the legacy pages/ mode (ui.workarounds): a tab moved onto one just started
ran its page alone and lost the menu. tests/test_deploy_failover.py pins what is patched."""

from __future__ import annotations

# The question's made-up fragment id, a session's flag, how often the browser is asked:
ASK, ASKING, ASK_EVERY_S = "glassbox-failover-ask", "_glassbox_asking", 0.1


def _ask(every: float | None):  # noqa: ANN202 - a ForwardMsg
    """Ask the browser for a run with its whole state every `every` s; None: stop."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    if every is None:
        msg.stop_auto_rerun.fragment_ids.append(ASK)
    else:
        msg.auto_rerun.interval, msg.auto_rerun.fragment_id = every, ASK
    return msg


def install() -> None:
    """Patch Streamlit's session manager and AppSession (idempotent)."""
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    PagesManager.uses_pages_directory = False  # before the first session: app.py's menu
    if getattr(AppSession, "_glassbox_failover", False):
        return
    connect, rerun = WebsocketSessionManager.connect_session, AppSession.request_rerun

    def connect_session(self, *args, **kwargs):  # noqa: ANN001, ANN202
        session_id = connect(self, *args, **kwargs)
        info = self.get_active_session_info(session_id)
        if kwargs.get("existing_session_id") and info is not None:  # a tab that reconnects
            setattr(info.session, ASKING, True)
            info.session._enqueue_forward_msg(_ask(ASK_EVERY_S))
        return session_id

    def request_rerun(self, client_state):  # noqa: ANN001, ANN202
        if client_state is not None:
            asked = client_state.fragment_id == ASK
            if getattr(self, ASKING, False) or asked:
                self._enqueue_forward_msg(_ask(None))
            if asked and not getattr(self, ASKING, False):
                return None  # a late tick of the question, already answered
            setattr(self, ASKING, False)
            if client_state.fragment_id and not self.has_fragment(client_state.fragment_id):
                whole = type(client_state)()  # the whole page, with every widget's value
                whole.CopyFrom(client_state)
                whole.fragment_id, whole.is_auto_rerun = "", False
                client_state = whole
        return rerun(self, client_state)

    WebsocketSessionManager.connect_session = connect_session
    AppSession.request_rerun = request_rerun
    AppSession._glassbox_failover = True
