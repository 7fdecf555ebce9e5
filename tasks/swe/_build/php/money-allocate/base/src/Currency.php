<?php

declare(strict_types=1);

namespace Ledger;

/** An ISO 4217 currency with the number of minor-unit digits it uses. */
final class Currency
{
    private const DIGITS = ['EUR' => 2, 'USD' => 2, 'GBP' => 2, 'JPY' => 0, 'KWD' => 3, 'CHF' => 2];

    private function __construct(private string $code, private int $digits)
    {
    }

    public static function of(string $code): self
    {
        $code = strtoupper($code);
        if (!array_key_exists($code, self::DIGITS)) {
            throw new \InvalidArgumentException("unknown currency: {$code}");
        }
        return new self($code, self::DIGITS[$code]);
    }

    public function code(): string
    {
        return $this->code;
    }

    public function digits(): int
    {
        return $this->digits;
    }

    public function equals(Currency $other): bool
    {
        return $this->code === $other->code;
    }
}
