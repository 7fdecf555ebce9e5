<?php

declare(strict_types=1);

namespace Routing;

/**
 * A small HTTP router. Routes are tried in the order they were added; groups add a common
 * path prefix; `mount` hands every path under a prefix to a sub-router.
 */
final class Router
{
    /** @var Route[] */
    private array $routes = [];
    /** @var array<string, Router> */
    private array $mounts = [];
    private string $prefix = '';

    public function add(string $method, string $pattern, string $handler, ?string $name = null): Route
    {
        $route = new Route(strtoupper($method), $this->prefix . $pattern, $handler, $name);
        $this->routes[] = $route;
        return $route;
    }

    public function get(string $pattern, string $handler, ?string $name = null): Route
    {
        return $this->add('GET', $pattern, $handler, $name);
    }

    public function post(string $pattern, string $handler, ?string $name = null): Route
    {
        return $this->add('POST', $pattern, $handler, $name);
    }

    /** Add the routes `$define` registers, each under `$prefix`. */
    public function group(string $prefix, callable $define): void
    {
        $saved = $this->prefix;
        $this->prefix .= rtrim($prefix, '/');
        try {
            $define($this);
        } finally {
            $this->prefix = $saved;
        }
    }

    /** Send every path starting with `$prefix` to `$router`, with the prefix removed. */
    public function mount(string $prefix, Router $router): void
    {
        $this->mounts[rtrim($prefix, '/')] = $router;
    }

    public function dispatch(string $method, string $uri): Result
    {
        $path = self::normalise($uri);
        $allowed = [];
        foreach ($this->routes as $route) {
            $params = $route->match($path);
            if ($params === null) {
                continue;
            }
            if ($route->method === strtoupper($method) || ($route->method === 'GET' && strtoupper($method) === 'HEAD')) {
                return Result::found($route, $params);
            }
            $allowed[] = $route->method;
        }
        foreach ($this->mounts as $prefix => $router) {
            if (strpos($path, $prefix) == false) {
                continue;
            }
            $rest = substr($path, strlen($prefix));
            if ($rest !== '' && $rest[0] !== '/') {
                continue;
            }
            $result = $router->dispatch($method, $rest === '' ? '/' : $rest);
            if ($result->status !== 404) {
                return $result;
            }
        }
        if ($allowed !== []) {
            return Result::methodNotAllowed(array_values(array_unique($allowed)));
        }
        return Result::notFound();
    }

    /** @param array<string, string|int> $params */
    public function url(string $name, array $params = []): string
    {
        foreach ($this->routes as $route) {
            if ($route->name === $name) {
                return $route->url($params);
            }
        }
        throw new \OutOfBoundsException("no route named {$name}");
    }

    private static function normalise(string $uri): string
    {
        $path = parse_url('/' . ltrim($uri, '/'), PHP_URL_PATH) ?: '/';
        $path = preg_replace('#/+#', '/', $path);
        if ($path !== '/' && str_ends_with($path, '/')) {
            $path = rtrim($path, '/');
        }
        return $path;
    }
}
