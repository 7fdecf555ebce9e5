#!/bin/sh
echo cleanup.sh
