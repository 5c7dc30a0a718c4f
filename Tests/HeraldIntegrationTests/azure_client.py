"""Drives Herald's Azure Notification Hubs routes with azure-notification-hub-unofficial, a
client none of us wrote (a port of Microsoft's Node SDK), used unmodified: only its connection
string points at Herald. AzureClientTests runs it and checks what it prints (one JSON object)
against the pipeline's records.

usage: azure_client.py <connection string> <hub> <scenario> [notification id]
scenarios:
  devices   installations: create (APNs template, FCM v1 native), read, patch, and one deleted
  send      a template send and a native APNs send to tag expressions
  testsend  the same two as test sends, with the outcome of each device they reached
  outcome   the outcome details of a notification
  schedule  a scheduled send
  cancel    the cancel of a scheduled send
  denied    one installation read, expected to be refused (another hub's key)
"""

import json
import sys
import time
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone

from azure_notification_hub import (
    AzureNHError,
    NotificationHubsClient,
    create_apple_notification,
    create_template_notification,
)

NS = {"sb": "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"}
APNS_TOKEN = "ab" * 32
FCM_TOKEN = "fcm-azure-client:APA91b" + "Q7x" * 40


def devices(client, hub):
    template = {"body": '{"aps":{"alert":"$(headline)"}}', "headers": {"apns-push-type": "alert"}, "tags": ["Alerts"]}
    client.create_or_update_installation(
        {"installationId": f"{hub}-iphone", "platform": "apns", "pushChannel": APNS_TOKEN, "tags": ["World"],
         "templates": {"news": template}})
    client.create_or_update_installation(
        {"installationId": f"{hub}-pixel", "platform": "fcmv1", "pushChannel": FCM_TOKEN, "tags": ["World", "Sports"]})
    client.create_or_update_installation(
        {"installationId": f"{hub}-ipad", "platform": "apns", "pushChannel": APNS_TOKEN, "tags": ["World"]})
    client.create_or_update_installation(
        {"installationId": f"{hub}-gone", "platform": "apns", "pushChannel": APNS_TOKEN, "tags": ["World"]})
    client.delete_installation(f"{hub}-gone")
    client.update_installation(f"{hub}-pixel", [{"op": "add", "path": "/tags", "value": "Breaking"}])
    iphone = client.get_installation(f"{hub}-iphone")
    pixel = client.get_installation(f"{hub}-pixel")
    try:
        client.get_installation(f"{hub}-gone")
        gone = 200
    except AzureNHError as error:
        gone = error.status_code
    return {"iphone": iphone, "pixel": pixel, "gone": gone}


def outcome(client, notification_id):
    """The outcome details of a notification, read once (the test waits for its receipts first)."""
    try:
        raw = client.get_notification_outcome_details(notification_id)["_raw_xml"]
    except AzureNHError as error:
        return {"status": error.status_code}
    root = ET.fromstring(raw)
    counts = {}
    for group in root:
        name = group.tag.split("}")[-1]
        if name.endswith("OutcomeCounts"):
            counts[name] = {o.findtext("sb:Name", namespaces=NS): int(o.findtext("sb:Count", namespaces=NS)) for o in group}
    return {"state": root.findtext("sb:State", namespaces=NS), "counts": counts, "id": root.findtext("sb:NotificationId", namespaces=NS)}


def send(client, hub):
    template = client.send_notification(
        create_template_notification({"headline": f"Final whistle ({hub})"}), tag_expression="World && Alerts")
    native = client.send_notification(
        create_apple_notification({"aps": {"alert": f"Native ({hub})"}}, headers={"apns-priority": "10"}),
        tag_expression="World || Nowhere")
    return {"template": template, "native": native}


def testsend(client, hub):
    answers = {}
    for name, notification, tags in [
        ("template", create_template_notification({"headline": f"Test ({hub})"}), "World && Alerts"),
        ("native", create_apple_notification({"aps": {"alert": f"Test native ({hub})"}}), "World || Nowhere"),
    ]:
        root = ET.fromstring(client.send_notification(notification, tag_expression=tags, test_send=True)["_raw_xml"])
        answers[name] = {
            "success": int(root.findtext("sb:Success", namespaces=NS)),
            "failure": int(root.findtext("sb:Failure", namespaces=NS)),
            "results": [
                {field: result.findtext(f"sb:{field}", namespaces=NS)
                 for field in ("ApplicationPlatform", "PnsHandle", "RegistrationId", "Outcome")}
                for result in root.findall("sb:Results/sb:RegistrationResult", NS)
            ],
        }
    return answers


def schedule(client, hub):
    when = datetime.now(timezone.utc) + timedelta(hours=1)
    return client.schedule_notification(when, create_template_notification({"headline": "later"}), tag_expression="World")


def cancel(client, notification_id):
    try:
        client.cancel_scheduled_notification(notification_id)
        return {"status": 200}
    except AzureNHError as error:
        return {"status": error.status_code, "body": error.body}


def denied(client, hub):
    try:
        client.get_installation(f"{hub}-iphone")
        return {"status": 200}
    except AzureNHError as error:
        return {"status": error.status_code, "body": error.body}


if __name__ == "__main__":
    connection, hub, scenario = sys.argv[1:4]
    with NotificationHubsClient(connection, hub) as client:
        if scenario in ("outcome", "cancel"):
            result = {"outcome": outcome, "cancel": cancel}[scenario](client, sys.argv[4])
        else:
            result = {"devices": devices, "send": send, "testsend": testsend, "schedule": schedule, "denied": denied}[scenario](
                client, hub)
    print(json.dumps(result))
