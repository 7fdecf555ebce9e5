<?php

declare(strict_types=1);

namespace Routing;

/** The outcome of a dispatch: 200 with a route and its parameters, 404, or 405 with the allowed methods. */
final class Result
{
    /**
     * @param array<string, string> $params
     * @param string[] $allowed
     */
    private function __construct(
        public readonly int $status,
        public readonly ?Route $route = null,
        public readonly array $params = [],
        public readonly array $allowed = [],
    ) {
    }

    /** @param array<string, string> $params */
    public static function found(Route $route, array $params): self
    {
        return new self(200, $route, $params);
    }

    public static function notFound(): self
    {
        return new self(404);
    }

    /** @param string[] $allowed */
    public static function methodNotAllowed(array $allowed): self
    {
        return new self(405, null, [], $allowed);
    }

    public function handler(): ?string
    {
        return $this->route?->handler;
    }
}
