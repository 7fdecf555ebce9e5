#!/bin/sh
echo report.sh
