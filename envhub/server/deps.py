"""Typed dependencies: routes receive the hub's services as parameters."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from envhub.core.auth import Access, Caller
from envhub.core.hub import Hub
from envhub.core.sessions import SessionManager


def get_hub(request: Request) -> Hub:
    return request.app.state.hub


def get_manager(request: Request) -> SessionManager:
    return request.app.state.hub.manager


# Declares the scheme in /openapi.json; the header itself is read by `Access.caller`, which also
# refuses a malformed one (HTTPBearer without auto_error would pass it as missing).
BEARER = HTTPBearer(auto_error=False, description="An API key; without keys, the client token (docs/security.md).")


def get_caller(request: Request,
               _: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)] = None) -> Caller:
    """The caller of a session route (401 when keys are on and the key is missing or unknown)."""
    access: Access = request.app.state.access
    return access.caller(request.headers.get("authorization"))


def check_reader(request: Request) -> None:
    """The read-only routes' gate: open unless `public_reads` is off with keys on."""
    access: Access = request.app.state.access
    access.reader(request.headers.get("authorization"))


HubDep = Annotated[Hub, Depends(get_hub)]
ManagerDep = Annotated[SessionManager, Depends(get_manager)]
CallerDep = Annotated[Caller, Depends(get_caller)]
READERS = [Depends(check_reader)]
