"""OfficeVerse, the office-document family (`office`)."""

from environments.office.env import OfficeEnvironment, OfficeFamily

__all__ = ["OfficeEnvironment", "OfficeFamily"]
