#!/bin/sh
echo stopping
