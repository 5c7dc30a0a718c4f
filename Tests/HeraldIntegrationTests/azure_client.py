"""Drives Herald's Azure Notification Hubs routes with azure-notification-hub-unofficial, a
client none of us wrote (a port of Microsoft's Node SDK), used unmodified: only its connection
string points at Herald. AzureClientTests runs it and checks what it prints (one JSON object)
against the pipeline's records.

usage: azure_client.py <connection string> <hub> <scenario>
scenarios:
  devices   installations: create (APNs template, FCM v1 native), read, patch, and one deleted
  send      a template send and a native APNs send to tag expressions; their outcome details
  schedule  a scheduled send, then its cancel
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
    """Polls the outcome details until the notification is done (404 while unknown)."""
    last = None
    for _ in range(600):
        try:
            raw = client.get_notification_outcome_details(notification_id)["_raw_xml"]
        except AzureNHError as error:
            if error.status_code != 404:
                raise
            time.sleep(0.2)
            continue
        root = ET.fromstring(raw)
        state = root.findtext("sb:State", namespaces=NS)
        counts = {}
        for group in root:
            name = group.tag.split("}")[-1]
            if name.endswith("OutcomeCounts"):
                counts[name] = {o.findtext("sb:Name", namespaces=NS): int(o.findtext("sb:Count", namespaces=NS)) for o in group}
        last = {"state": state, "counts": counts, "id": root.findtext("sb:NotificationId", namespaces=NS)}
        pushed = sum(sum(c.values()) for c in counts.values())
        if state in ("Completed", "NoTargetFound") and pushed >= 1:
            return last
        time.sleep(0.2)
    return last


def send(client, hub):
    template = client.send_notification(
        create_template_notification({"headline": f"Final whistle ({hub})"}), tag_expression="World && Alerts")
    native = client.send_notification(
        create_apple_notification({"aps": {"alert": f"Native ({hub})"}}, headers={"apns-priority": "10"}),
        tag_expression="World || Nowhere")
    return {
        "template": template, "native": native,
        "templateOutcome": outcome(client, template["notificationId"]),
        "nativeOutcome": outcome(client, native["notificationId"]),
    }


def schedule(client, hub):
    when = datetime.now(timezone.utc) + timedelta(hours=1)
    scheduled = client.schedule_notification(when, create_template_notification({"headline": "later"}), tag_expression="World")
    time.sleep(0.5)
    cancelled = None
    for _ in range(100):
        try:
            client.cancel_scheduled_notification(scheduled["notificationId"])
            cancelled = 200
            break
        except AzureNHError as error:
            cancelled = error.status_code
            if error.status_code != 404:
                break
            time.sleep(0.2)
    return {"scheduled": scheduled, "cancelled": cancelled}


def denied(client, hub):
    try:
        client.get_installation(f"{hub}-iphone")
        return {"status": 200}
    except AzureNHError as error:
        return {"status": error.status_code, "body": error.body}


if __name__ == "__main__":
    connection, hub, scenario = sys.argv[1:4]
    with NotificationHubsClient(connection, hub) as client:
        result = {"devices": devices, "send": send, "schedule": schedule, "denied": denied}[scenario](client, hub)
    print(json.dumps(result))
