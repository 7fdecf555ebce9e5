"""Typed dependencies: routes receive the hub's services as parameters."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from envhub.config import Settings
from envhub.server.hub import Hub
from envhub.server.sessions import SessionManager


def get_hub(request: Request) -> Hub:
    return request.app.state.hub


def get_manager(request: Request) -> SessionManager:
    return request.app.state.hub.manager


def get_settings_dep(request: Request) -> Settings:
    return request.app.state.hub.settings


HubDep = Annotated[Hub, Depends(get_hub)]
ManagerDep = Annotated[SessionManager, Depends(get_manager)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
