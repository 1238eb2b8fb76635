"""A tiny HTTP API over the shop's inventory."""

import json
from http.server import BaseHTTPRequestHandler, HTTPServer

STOCK = {
    "TEA-001": {"name": "Green tea, 100 g", "quantity": 37, "price_cents": 650},
    "MUG-002": {"name": "Stoneware mug", "quantity": 12, "price_cents": 1800},
}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        sku = self.path.strip("/")
        item = STOCK.get(sku)
        if item is None:
            self.send_response(404)
            self.end_headers()
            return
        body = json.dumps(item).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


def main(port=8000):
    server = HTTPServer(("127.0.0.1", port), Handler)
    print(f"serving on http://127.0.0.1:{port}")
    server.serve_forever()


if __name__ == "__main__":
    main()
