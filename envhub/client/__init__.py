"""The envhub client: `EnvClient` and `AsyncEnvClient`, twins of the same surface.

    with EnvClient("http://127.0.0.1:8000") as hub:
        with hub.session("terminal", task_id="terminal/count-error-lines") as s:
            s.step("bash", command="cut -d' ' -f3 logs/app.log | grep -cx ERROR > error_count.txt")
            print(s.verify().reward)  # 1.0

Errors come back as the classes of `envhub.errors` (mapped from the problem's `code`); only
retryable ones (`unavailable`, connection faults) are retried, and steps carry an idempotency
key so a retried step never acts twice. Both send `ENVHUB_API_KEY` (or `api_key=`) as a Bearer
credential; `auth_headers()` gives the same header to other clients (OpenEnv's `headers=`).
Both take a `transport=`: `envhub.client.asgi.InProcess(app)` serves the app in this process
without a socket (`transport()` for the blocking client, `async_transport()` for the async one).
"""

from envhub.client._async import AsyncEnvClient, AsyncSession
from envhub.client._base import auth_headers
from envhub.client._sync import EnvClient, Session

__all__ = ["AsyncEnvClient", "AsyncSession", "EnvClient", "Session", "auth_headers"]
