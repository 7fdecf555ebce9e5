<?php

declare(strict_types=1);

namespace Routing;

/** One route: an HTTP method, a path pattern like `/users/{id:\d+}` and a handler name. */
final class Route
{
    private string $regex;
    /** @var string[] */
    private array $params = [];

    public function __construct(
        public readonly string $method,
        public readonly string $pattern,
        public readonly string $handler,
        public readonly ?string $name = null,
    ) {
        $this->regex = $this->compile($pattern);
    }

    /** @return array<string, string>|null the captured parameters, or null if the path does not match */
    public function match(string $path): ?array
    {
        if (!preg_match($this->regex, $path, $m)) {
            return null;
        }
        $out = [];
        foreach ($this->params as $p) {
            $out[$p] = rawurldecode($m[$p]);
        }
        return $out;
    }

    /** @param array<string, string|int> $params */
    public function url(array $params = []): string
    {
        return preg_replace_callback('/\{(\w+)(?::[^}]+)?\}/', function (array $m) use ($params): string {
            if (!array_key_exists($m[1], $params)) {
                throw new \InvalidArgumentException("missing parameter {$m[1]} for route {$this->pattern}");
            }
            return rawurlencode((string) $params[$m[1]]);
        }, $this->pattern);
    }

    private function compile(string $pattern): string
    {
        $regex = '';
        $offset = 0;
        preg_match_all('/\{(\w+)(?::([^}]+))?\}/', $pattern, $all, PREG_SET_ORDER | PREG_OFFSET_CAPTURE);
        foreach ($all as $m) {
            $regex .= preg_quote(substr($pattern, $offset, $m[0][1] - $offset), '#');
            $name = $m[1][0];
            $this->params[] = $name;
            $regex .= '(?P<' . $name . '>' . ($m[2][0] ?? '' ?: '[^/]+') . ')';
            $offset = $m[0][1] + strlen($m[0][0]);
        }
        $regex .= preg_quote(substr($pattern, $offset), '#');
        return '#^' . $regex . '$#';
    }
}
