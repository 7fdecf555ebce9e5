"""The registry browser served at `/`: environments with their health, tasks, episodes, charts.

    routes.py   FastAPI handlers (HTML)      views.py   what each page shows (runs.py: the run pages)
    render.py   Jinja2 + headers + 404       charts.py  inline SVG charts
    templates/  Jinja2 templates             static/    app.css, app.js (no build step)
"""

from envhub.web.routes import router

__all__ = ["router"]
