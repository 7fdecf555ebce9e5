<?php

declare(strict_types=1);

namespace Ledger;

/**
 * An amount of money in minor units (cents) with its ISO currency code.
 * Immutable: every operation returns a new instance.
 */
final class Money implements \JsonSerializable
{
    private int $amount;
    private Currency $currency;

    public function __construct(int $amount, Currency $currency)
    {
        $this->amount = $amount;
        $this->currency = $currency;
    }

    public static function of(string $decimal, string $code): self
    {
        $currency = Currency::of($code);
        if (!preg_match('/^(-)?(\d+)(?:\.(\d+))?$/', trim($decimal), $m)) {
            throw new \InvalidArgumentException("not a decimal amount: {$decimal}");
        }
        $fraction = $m[3] ?? '';
        if (strlen($fraction) > $currency->digits()) {
            throw new \InvalidArgumentException("too many decimals for {$code}: {$decimal}");
        }
        $minor = (int) ($m[2] . str_pad($fraction, $currency->digits(), '0'));
        return new self($m[1] === '-' ? -$minor : $minor, $currency);
    }

    public static function zero(string $code): self
    {
        return new self(0, Currency::of($code));
    }

    public function amount(): int
    {
        return $this->amount;
    }

    public function currency(): Currency
    {
        return $this->currency;
    }

    public function add(Money $other): self
    {
        $this->assertSameCurrency($other);
        return new self($this->amount + $other->amount, $this->currency);
    }

    public function subtract(Money $other): self
    {
        $this->assertSameCurrency($other);
        return new self($this->amount - $other->amount, $this->currency);
    }

    public function multiply(float $factor, int $roundingMode = PHP_ROUND_HALF_UP): self
    {
        return new self((int) round($this->amount * $factor, 0, $roundingMode), $this->currency);
    }

    public function negate(): self
    {
        return new self(-$this->amount, $this->currency);
    }

    public function isZero(): bool
    {
        return $this->amount === 0;
    }

    public function isNegative(): bool
    {
        return $this->amount < 0;
    }

    public function equals(Money $other): bool
    {
        return $this->currency->equals($other->currency) && $this->amount === $other->amount;
    }

    public function compare(Money $other): int
    {
        $this->assertSameCurrency($other);
        return $this->amount <=> $other->amount;
    }

    /**
     * Split this amount by integer ratios, e.g. [1, 1, 1] for three equal shares.
     * The parts always add up to the original amount.
     *
     * @param int[] $ratios
     * @return Money[]
     */
    public function allocate(array $ratios): array
    {
        if ($ratios === []) {
            throw new \InvalidArgumentException('no ratios given');
        }
        $total = array_sum($ratios);
        if ($total <= 0 || min($ratios) < 0) {
            throw new \InvalidArgumentException('ratios must be non-negative with a positive sum');
        }
        $parts = [];
        $remainder = $this->amount;
        foreach ($ratios as $ratio) {
            $share = intdiv($this->amount * $ratio, $total);
            $parts[] = $share;
            $remainder -= $share;
        }
        // Hand out the cents lost to integer division, one at a time, to the first parts.
        $step = $remainder < 0 ? -1 : 1;
        for ($i = 0; $remainder !== 0; $i++) {
            if ($ratios[$i % count($ratios)] > 0) {
                $parts[$i % count($ratios)] += $step;
                $remainder -= $step;
            }
        }
        return array_map(fn (int $a) => new self($a, $this->currency), $parts);
    }

    /** @return Money[] */
    public function split(int $n): array
    {
        if ($n < 1) {
            throw new \InvalidArgumentException('cannot split into fewer than one part');
        }
        return $this->allocate(array_fill(0, $n, 1));
    }

    public function format(): string
    {
        $digits = $this->currency->digits();
        $abs = abs($this->amount);
        $units = intdiv($abs, 10 ** $digits);
        $text = number_format($units, 0, '.', ',');
        if ($digits > 0) {
            $text .= '.' . str_pad((string) ($abs % 10 ** $digits), $digits, '0', STR_PAD_LEFT);
        }
        return ($this->amount < 0 ? '-' : '') . $text . ' ' . $this->currency->code();
    }

    public function jsonSerialize(): array
    {
        return ['amount' => $this->amount, 'currency' => $this->currency->code()];
    }

    private function assertSameCurrency(Money $other): void
    {
        if (!$this->currency->equals($other->currency)) {
            throw new CurrencyMismatch($this->currency, $other->currency);
        }
    }
}
