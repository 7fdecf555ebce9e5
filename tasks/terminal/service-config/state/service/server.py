"""notesd: a tiny HTTP service. Reads its settings from config.ini next to this file."""
import configparser
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser()
    if not cfg.read(HERE / "config.ini"):
        sys.exit("config.ini is missing")
    for section, key in [("server", "host"), ("server", "port"), ("app", "greeting"), ("auth", "token_file")]:
        if not cfg.has_option(section, key):
            sys.exit(f"config.ini: [{section}] {key} is required")
    return cfg


def main() -> None:
    cfg = load()
    token = (HERE / cfg["auth"]["token_file"]).read_text().strip()
    greeting = cfg["app"]["greeting"]

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, body: str) -> None:
            data = (body + "\n").encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/health":
                return self._send(200, "ok")
            if self.path == "/greeting":
                if self.headers.get("X-Token") != token:
                    return self._send(401, "unauthorized")
                return self._send(200, greeting)
            return self._send(404, "not found")

        def log_message(self, fmt: str, *args) -> None:
            sys.stderr.write("notesd: " + fmt % args + "\n")

    server = ThreadingHTTPServer((cfg["server"]["host"], cfg.getint("server", "port")), Handler)
    print(f"notesd listening on {cfg['server']['host']}:{cfg['server']['port']}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
