<?php

declare(strict_types=1);

namespace Routing\Tests;

use Routing\Router;
use PHPUnit\Framework\TestCase;

final class RouterTest extends TestCase
{
    private function router(): Router
    {
        $r = new Router();
        $r->get('/', 'home');
        $r->get('/users/{id:\d+}', 'users.show', 'user');
        $r->post('/users', 'users.create');
        $r->get('/files/{path:.+}', 'files');
        $r->group('/admin/', function (Router $r): void {
            $r->get('/stats', 'admin.stats', 'stats');
        });
        return $r;
    }

    public function testStaticRoute(): void
    {
        $this->assertSame('home', $this->router()->dispatch('GET', '/')->handler());
    }

    public function testCapturesTypedParameter(): void
    {
        $res = $this->router()->dispatch('GET', '/users/42?tab=posts');
        $this->assertSame(200, $res->status);
        $this->assertSame(['id' => '42'], $res->params);
    }

    public function testParameterConstraint(): void
    {
        $this->assertSame(404, $this->router()->dispatch('GET', '/users/abc')->status);
    }

    public function testMethodNotAllowed(): void
    {
        $res = $this->router()->dispatch('DELETE', '/users');
        $this->assertSame(405, $res->status);
        $this->assertSame(['POST'], $res->allowed);
    }

    public function testHeadFallsBackToGet(): void
    {
        $this->assertSame('users.show', $this->router()->dispatch('HEAD', '/users/7')->handler());
    }

    public function testTrailingAndDoubleSlashes(): void
    {
        $this->assertSame('admin.stats', $this->router()->dispatch('GET', '//admin//stats/')->handler());
    }

    public function testWildcardAndDecoding(): void
    {
        $res = $this->router()->dispatch('GET', '/files/a/b%20c.txt');
        $this->assertSame(['path' => 'a/b c.txt'], $res->params);
    }

    public function testReverseRouting(): void
    {
        $this->assertSame('/users/9', $this->router()->url('user', ['id' => 9]));
        $this->assertSame('/admin/stats', $this->router()->url('stats'));
    }

    public function testReverseRoutingMissingParameter(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->router()->url('user');
    }

    public function testUnknownPathIsNotFound(): void
    {
        $res = $this->router()->dispatch('GET', '/nope');
        $this->assertSame(404, $res->status);
        $this->assertNull($res->handler());
    }

    public function testMountAtPathStart(): void
    {
        $api = new Router();
        $api->get('/', 'api.index');
        $api->get('/items/{id}', 'api.item');
        $r = new Router();
        $r->get('/', 'home');
        $r->mount('/api', $api);
        $res = $r->dispatch('GET', '/api/items/5');
        $this->assertSame('api.item', $res->handler());
        $this->assertSame(['id' => '5'], $res->params);
        $this->assertSame('api.index', $r->dispatch('GET', '/api')->handler());
    }

    public function testMountDoesNotCatchOtherPaths(): void
    {
        $api = new Router();
        $api->get('/x', 'api.x');
        $r = new Router();
        $r->mount('/api', $api);
        $this->assertSame(404, $r->dispatch('GET', '/other/api/x')->status);
    }
}
