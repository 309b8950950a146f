"""Logging in and checking who is logged in."""

from auth.session import Session

_sessions = {}


def login(user, now=None):
    """Starts a session for a user whose credentials were already checked."""
    session = Session(user, now=now)
    _sessions[user] = session
    return session


def current_user(user, now=None):
    """The user if their session is still valid (and marks the activity), else None."""
    session = _sessions.get(user)
    if session is None or session.is_expired(now):
        _sessions.pop(user, None)
        return None
    session.touch(now)
    return session.user
