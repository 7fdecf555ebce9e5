#!/bin/sh
echo backup.sh
