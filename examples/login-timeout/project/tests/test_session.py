"""The login timeout: 30 minutes of inactivity, not 30 seconds."""

from auth.login import current_user, login
from auth.session import LOGIN_TIMEOUT_MINUTES, Session

START = 1_700_000_000.0
MINUTE = 60.0


def test_timeout_is_thirty_minutes():
    assert LOGIN_TIMEOUT_MINUTES == 30


def test_session_is_active_after_one_minute():
    session = Session("ada", now=START)
    assert not session.is_expired(now=START + 1 * MINUTE)


def test_session_is_active_just_before_the_timeout():
    session = Session("ada", now=START)
    assert not session.is_expired(now=START + 29 * MINUTE + 59)


def test_session_expires_after_the_timeout():
    session = Session("ada", now=START)
    assert session.is_expired(now=START + 31 * MINUTE)


def test_activity_keeps_the_user_logged_in():
    login("grace", now=START)
    assert current_user("grace", now=START + 20 * MINUTE) == "grace"
    assert current_user("grace", now=START + 40 * MINUTE) == "grace"
    assert current_user("grace", now=START + 71 * MINUTE) is None
