<?php

declare(strict_types=1);

namespace Ledger\Tests;

use Ledger\CurrencyMismatch;
use Ledger\Money;
use PHPUnit\Framework\TestCase;

final class MoneyTest extends TestCase
{
    public function testParsesDecimalAmounts(): void
    {
        $this->assertSame(1050, Money::of('10.5', 'EUR')->amount());
        $this->assertSame(-3, Money::of('-0.03', 'USD')->amount());
        $this->assertSame(500, Money::of('500', 'JPY')->amount());
    }

    public function testRejectsTooManyDecimals(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Money::of('1.005', 'EUR');
    }

    public function testAddAndSubtract(): void
    {
        $a = Money::of('1.25', 'EUR');
        $b = Money::of('0.80', 'EUR');
        $this->assertSame(205, $a->add($b)->amount());
        $this->assertSame(45, $a->subtract($b)->amount());
    }

    public function testCurrencyMismatch(): void
    {
        $this->expectException(CurrencyMismatch::class);
        Money::of('1', 'EUR')->add(Money::of('1', 'USD'));
    }

    public function testMultiplyRoundsHalfUp(): void
    {
        $this->assertSame(103, Money::of('2.05', 'EUR')->multiply(0.5)->amount());
    }

    public function testFormat(): void
    {
        $this->assertSame('1,234.50 EUR', Money::of('1234.5', 'EUR')->format());
        $this->assertSame('-0.07 USD', Money::of('-0.07', 'USD')->format());
        $this->assertSame('1,500 JPY', Money::of('1500', 'JPY')->format());
    }

    public function testAllocateEvenAmount(): void
    {
        $parts = Money::of('100', 'EUR')->allocate([1, 3]);
        $this->assertSame([2500, 7500], array_map(fn (Money $m) => $m->amount(), $parts));
    }

    public function testAllocateRejectsBadRatios(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Money::of('1', 'EUR')->allocate([0, 0]);
    }

    public function testJson(): void
    {
        $this->assertSame('{"amount":250,"currency":"GBP"}', json_encode(Money::of('2.50', 'GBP')));
    }
}
