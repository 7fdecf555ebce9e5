<?php

declare(strict_types=1);

namespace Ledger\Tests;

use Ledger\Ledger;
use Ledger\Money;
use PHPUnit\Framework\TestCase;

final class LedgerTest extends TestCase
{
    public function testTransferMovesMoney(): void
    {
        $l = new Ledger('EUR');
        $l->post('alice', Money::of('50', 'EUR'));
        $l->transfer('alice', 'bob', Money::of('20', 'EUR'));
        $this->assertSame(3000, $l->balance('alice')->amount());
        $this->assertSame(2000, $l->balance('bob')->amount());
        $this->assertSame(5000, $l->total()->amount());
    }

    public function testNegativeTransferRejected(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        (new Ledger('EUR'))->transfer('a', 'b', Money::of('-1', 'EUR'));
    }

    public function testUnknownAccountIsZero(): void
    {
        $this->assertTrue((new Ledger('USD'))->balance('nobody')->isZero());
    }

    public function testSplitBillEvenly(): void
    {
        $l = new Ledger('EUR');
        $l->splitBill(Money::of('30', 'EUR'), ['a' => 1, 'b' => 2]);
        $this->assertSame(-1000, $l->balance('a')->amount());
        $this->assertSame(-2000, $l->balance('b')->amount());
    }

    public function testSplitBillChargesTheWholeBill(): void
    {
        $l = new Ledger('EUR');
        $l->splitBill(Money::of('10', 'EUR'), ['a' => 1, 'b' => 1, 'c' => 1]);
        $this->assertSame(-1000, $l->total()->amount());
    }
}
